/* SPDX-License-Identifier: MIT */
/* report.c - the outputs a reader sees: text and JSON. */
#include <inttypes.h>
#include <string.h>
#include <sys/wait.h>
#include "hist.h"
#include "json.h"
#include "libprof.h"
#include "report.h"
#include "symbols.h"
#include "verdict.h"

static const char *human_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	snprintf(buf, len, u ? "%.1f%s" : "%.0f%s", v, unit[u]);
	return buf;
}

static void site_text(const struct mp_trace *t, uint32_t site, char *buf, size_t len)
{
	const struct mp_site *s = &t->sites[site < t->nsites ? site : 0];
	size_t used = 0;

	buf[0] = 0;
	if (!site || !s->nframes) {
		snprintf(buf, len, "(unknown)");
		return;
	}
	for (uint32_t i = 0; i < s->nframes && used + 4 < len; i++) {
		char fr[512];

		mp_frame_format(t, &s->frames[i], fr, sizeof(fr));
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " <- " : "", fr);
	}
}

static int lib_used(const struct mp_libprof *lib)
{
	for (int k = 0; k < MP_LIB_KINDS; k++)
		if (mp_hist_count(lib->hist[k], MP_LIB_BUCKETS))
			return 1;
	return 0;
}

static uint64_t lib_total(const struct mp_libprof *lib)
{
	uint64_t sum = 0;

	for (int k = 0; k < MP_LIB_KINDS; k++)
		if (mp_libprof_disjoint(k))
			sum += lib->total_ns[k];
	return sum;
}

/* "not the program's (libmrcache, libbpf): mmap 5 20.0GiB, munmap 3 24.0KiB" */
static void text_not_program(FILE *f, const struct mp_analysis *a, int o)
{
	static const char *const who[MP_NP_OWNERS] = {
		[MP_NP_LIBRARY] = "libmrcache, libbpf",
		[MP_NP_PROFILER] = "libmrcache's profiling, MRCACHE_PROF",
	};
	const char *sep = ": ";
	char b[32];

	for (int k = 0; k < MP_VM_KINDS; k++) {
		if (!a->sum.np[o][k].calls)
			continue;
		if (sep[0] == ':')
			fprintf(f, "  not the program's (%s, not above)", who[o]);
		fprintf(f, "%s%s %" PRIu64 " %s", sep, mp_kind_name((enum mp_kind)k),
			a->sum.np[o][k].calls, human_bytes(a->sum.np[o][k].bytes, b, sizeof(b)));
		sep = ", ";
	}
	if (sep[0] == ',')
		fputc('\n', f);
}

static void text_vm(FILE *f, const struct mp_analysis *a)
{
	uint64_t calls = 0, errors = 0, bytes = 0, total = 0;
	char b[32];

	fprintf(f, "\nVM activity          calls  errors        bytes   total ms    p50 us    p90 us    p99 us    max us\n");
	for (int k = 0; k < MP_VM_KINDS; k++) {
		const struct mp_kind_sum *s = &a->sum.k[k];

		if (!s->calls)
			continue;
		fprintf(f, "  %-14s %9" PRIu64 " %7" PRIu64 " %12s %10.3f %9.1f %9.1f %9.1f %9.1f\n",
			mp_kind_name((enum mp_kind)k), s->calls, s->errors,
			human_bytes(s->bytes, b, sizeof(b)), (double)s->lat_total_ns / 1e6,
			(double)mp_percentile_sorted(s->lat, s->calls, 50) / 1e3,
			(double)mp_percentile_sorted(s->lat, s->calls, 90) / 1e3,
			(double)mp_percentile_sorted(s->lat, s->calls, 99) / 1e3,
			(double)(s->calls ? s->lat[s->calls - 1] : 0) / 1e3);
		calls += s->calls, errors += s->errors, bytes += s->bytes;
		total += s->lat_total_ns;
	}
	fprintf(f, "  %-14s %9" PRIu64 " %7" PRIu64 " %12s %10.3f\n", "all", calls, errors,
		human_bytes(bytes, b, sizeof(b)), (double)total / 1e6);
	for (int o = 0; o < MP_NP_OWNERS; o++)
		text_not_program(f, a, o);
}

static void text_sites(FILE *f, const struct mp_analysis *a, int top)
{
	char b[32], site[2048];

	fprintf(f, "\nTop call sites (syscall instruction <- its callers, by %s)\n",
		a->t->unwind ? "DWARF unwinding" : "stack scan");
	fprintf(f, "      calls        bytes   total ms   inval  syscall   site\n");
	for (size_t i = 0; i < a->sum.nsites && (int)i < top; i++) {
		const struct mp_site_sum *s = &a->sum.sites[i];

		site_text(a->t, s->site, site, sizeof(site));
		fprintf(f, "  %9" PRIu64 " %12s %10.3f %7" PRIu64 "  %-9s %s\n", s->calls,
			human_bytes(s->bytes, b, sizeof(b)), (double)s->lat_total_ns / 1e6,
			s->invalidated, mp_kind_name((enum mp_kind)s->kind), site);
	}
	if (a->sum.nsites > (size_t)top)
		fprintf(f, "  ... %zu more (--top N)\n", a->sum.nsites - (size_t)top);
}

static void text_sim(FILE *f, const struct mp_analysis *a)
{
	const struct mp_sim_result *r0 = &a->res[0];
	char b[32], b2[32];

	if (!a->t->buffer_min) {
		fprintf(f, "\nSimulated registration cache: off (buffers not traced: --buffer-min 0)\n");
		return;
	}
	fprintf(f, "\nSimulated registration cache over I/O buffers of >= %s "
		"(%" PRIu64 " reads, %" PRIu64 " writes, %s moved; %" PRIu64 " through io_uring, %"
		PRIu64 " of them into fixed buffers)\n",
		human_bytes(a->t->buffer_min, b, sizeof(b)), a->sum.io_calls[0],
		a->sum.io_calls[1], human_bytes(a->sum.io_bytes[0] + a->sum.io_bytes[1], b2, sizeof(b2)),
		a->sum.io_uring, a->sum.io_fixed);
	if (a->sum.lib_io_calls)
		fprintf(f, "  not the program's: %" PRIu64 " reads/writes, %s moved, by ld.so, libbpf or "
			"libmrcache (not simulated; --library-io counts them)\n",
			a->sum.lib_io_calls, human_bytes(a->sum.lib_io_bytes, b, sizeof(b)));
	else if (a->library_io)
		fprintf(f, "  the I/O of ld.so, libbpf and libmrcache is counted as the program's "
			"(--library-io)\n");
	fprintf(f, "  %-12s %7s %7s %7s %6s %6s %6s %6s %6s %9s %9s %9s %9s %9s %10s %9s\n",
		"config", "uses", "hits", "misses", "stale", "regs", "deregs", "inval", "evict",
		"reg ms", "dereg ms", "mon ms", "lookup ms", "total ms", "nocache ms", "saved ms");
	for (size_t i = 0; i < a->nconf; i++) {
		const struct mp_sim_result *r = &a->res[i];
		uint64_t inval = r->invalidated[0] + r->invalidated[1] + r->invalidated[2];

		fprintf(f, "  %-12s %7" PRIu64 " %7" PRIu64 " %7" PRIu64 " %6" PRIu64 " %6" PRIu64
			" %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %9.3f %9.3f %9.3f %9.3f %9.3f %10.3f %9.3f\n",
			a->conf[i].name, r->uses, r->hits, r->misses, r->stale_hits,
			r->registrations, r->deregistrations, inval, r->dereg_evicted,
			r->reg_ns / 1e6, r->dereg_ns / 1e6, r->monitor_ns / 1e6, r->lookup_ns / 1e6,
			mp_sim_total_ns(r) / 1e6, r->nocache_ns / 1e6,
			(r->nocache_ns - mp_sim_total_ns(r)) / 1e6);
	}
	fprintf(f, "  VM calls that invalidated registrations (%s): %" PRIu64
		", at most %" PRIu64 " in one call; regions by cause: unmap %" PRIu64
		", remap %" PRIu64 ", discard %" PRIu64 "\n", a->conf[0].name,
		r0->ops_invalidating, r0->max_per_op, r0->invalidated[MP_INV_UNMAP],
		r0->invalidated[MP_INV_REMAP], r0->invalidated[MP_INV_DISCARD]);
	mp_verdict_text(f, a);
	for (size_t i = 0; i < a->nconf; i++) {
		const struct mp_sim_result *r = &a->res[i];
		double total = mp_sim_total_ns(r);

		if (!r->uses)
			continue;
		char would[96] = "";

		if (!mp_dereg_dominates(r) && r->dereg_ns > 0)
			snprintf(would, sizeof(would), " (it would at %.1fx the modelled "
				 "deregistration cost)", mp_dereg_dominance_factor(r));
		fprintf(f, "  %s: deregistration is %.0f%% of the cache's cost (registration %.0f%%, "
			"monitor %.0f%%): it %s%s; the cache %s %.3f ms (%.0f%%) against registering "
			"every use%s\n", a->conf[i].name, 100 * r->dereg_ns / total,
			100 * r->reg_ns / total, 100 * r->monitor_ns / total,
			mp_dereg_dominates(r) ? "dominates" : "does not dominate", would,
			r->nocache_ns >= total ? "saves" : "costs",
			(r->nocache_ns >= total ? r->nocache_ns - total : total - r->nocache_ns) / 1e6,
			r->nocache_ns > 0 ? 100 * (r->nocache_ns - total) / r->nocache_ns : 0.0,
			r->stale_hits ? "; STALE hits: this configuration would corrupt data" : "");
	}
}

static void text_lib(FILE *f, const struct mp_trace *t)
{
	const struct mp_libprof *lib = &t->lib;
	uint64_t total = lib_total(lib);

	if (!lib_used(lib)) {
		fprintf(f, "\nlibmrcache: no activity recorded (%u MRCACHE_PROF dumps)\n", lib->dumps);
		return;
	}
	fprintf(f, "\nlibmrcache time split (MRCACHE_PROF, %u process dumps; log2 histograms, "
		"percentiles good to 2x)\n", lib->dumps);
	fprintf(f, "  %-16s %9s %10s %6s %9s %9s %9s\n", "work", "count", "total ms", "share",
		"p50 us", "p90 us", "p99 us");
	for (int k = 0; k < MP_LIB_KINDS; k++) {
		const uint64_t *h = lib->hist[k];
		int in_total = mp_libprof_disjoint(k);

		fprintf(f, "  %-16s %9" PRIu64 " %10.3f %5.1f%% %9.2f %9.2f %9.2f%s\n",
			mp_libprof_kind_name(k), mp_hist_count(h, MP_LIB_BUCKETS),
			(double)lib->total_ns[k] / 1e6,
			in_total && total ? 100.0 * (double)lib->total_ns[k] / (double)total : 0.0,
			mp_hist_percentile(h, MP_LIB_BUCKETS, 50) / 1e3,
			mp_hist_percentile(h, MP_LIB_BUCKETS, 90) / 1e3,
			mp_hist_percentile(h, MP_LIB_BUCKETS, 99) / 1e3,
			in_total ? "" : "  (contains inner work: not in the shares)");
	}
}

void mp_report_text(FILE *f, const struct mp_analysis *a, int top)
{
	const struct mp_trace *t = a->t;

	fprintf(f, "mrc-prof: %s\n", t->command ? t->command : "");
	fprintf(f, "  %u process%s, %.3f s, exit status %d; latencies exclude %.1f us of "
		"tracing overhead per traced call (calibrated: the least, p5)\n", a->sum.processes,
		a->sum.processes == 1 ? "" : "es", (double)t->duration_ns / 1e9,
		WIFEXITED(t->exit_status) ? WEXITSTATUS(t->exit_status)
					  : 128 + WTERMSIG(t->exit_status),
		(double)t->overhead_ns / 1e3);
	fprintf(f, "  cpu: program %.3f s, tracer %.3f s\n", (double)t->program_cpu_ns / 1e9,
		(double)t->tracer_cpu_ns / 1e9);
	text_vm(f, a);
	text_sites(f, a, top);
	text_sim(f, a);
	text_lib(f, t);
}

void mp_report_counts(FILE *f, const struct mp_analysis *a)
{
	/* Every call the processes made, whoever made it: what strace counts. */
	for (int k = 0; k < MP_VM_KINDS; k++)
		fprintf(f, "%s %" PRIu64 "\n", mp_kind_name((enum mp_kind)k),
			a->sum.k[k].calls + a->sum.np[MP_NP_LIBRARY][k].calls +
			a->sum.np[MP_NP_PROFILER][k].calls);
}

/* --- JSON --- */

static void json_hist(struct mp_json *j, const char *key, const uint64_t *h, int n)
{
	mp_json_open(j, key, '[');
	for (int b = 0; b < n; b++)
		mp_json_u64(j, NULL, h[b]);
	mp_json_close(j, ']');
}

static void json_vm(struct mp_json *j, const struct mp_analysis *a)
{
	mp_json_open(j, "syscalls", '{');
	for (int k = 0; k < MP_VM_KINDS; k++) {
		const struct mp_kind_sum *s = &a->sum.k[k];

		mp_json_open(j, mp_kind_name((enum mp_kind)k), '{');
		mp_json_u64(j, "calls", s->calls);
		mp_json_u64(j, "errors", s->errors);
		mp_json_u64(j, "bytes", s->bytes);
		mp_json_u64(j, "latency_total_ns", s->lat_total_ns);
		mp_json_u64(j, "latency_p50_ns", mp_percentile_sorted(s->lat, s->calls, 50));
		mp_json_u64(j, "latency_p90_ns", mp_percentile_sorted(s->lat, s->calls, 90));
		mp_json_u64(j, "latency_p99_ns", mp_percentile_sorted(s->lat, s->calls, 99));
		mp_json_u64(j, "latency_max_ns", s->calls ? s->lat[s->calls - 1] : 0);
		json_hist(j, "latency_log2_ns", s->hist, MP_HIST_BUCKETS);
		mp_json_close(j, '}');
	}
	mp_json_close(j, '}');
	mp_json_open(j, "not_program", '{');
	for (int o = 0; o < MP_NP_OWNERS; o++) {
		mp_json_open(j, o == MP_NP_LIBRARY ? "library" : "profiler", '{');
		for (int k = 0; k < MP_VM_KINDS; k++) {
			mp_json_open(j, mp_kind_name((enum mp_kind)k), '{');
			mp_json_u64(j, "calls", a->sum.np[o][k].calls);
			mp_json_u64(j, "bytes", a->sum.np[o][k].bytes);
			mp_json_close(j, '}');
		}
		mp_json_close(j, '}');
	}
	mp_json_close(j, '}');
}

static void json_sites(struct mp_json *j, const struct mp_analysis *a, int top)
{
	mp_json_open(j, "sites", '[');
	for (size_t i = 0; i < a->sum.nsites && (int)i < top; i++) {
		const struct mp_site_sum *s = &a->sum.sites[i];
		const struct mp_site *site = &a->t->sites[s->site];

		mp_json_open(j, NULL, '{');
		mp_json_str(j, "syscall", mp_kind_name((enum mp_kind)s->kind));
		mp_json_u64(j, "calls", s->calls);
		mp_json_u64(j, "bytes", s->bytes);
		mp_json_u64(j, "latency_total_ns", s->lat_total_ns);
		mp_json_u64(j, "invalidated", s->invalidated);
		mp_json_open(j, "frames", '[');
		for (uint32_t fr = 0; fr < site->nframes; fr++) {
			const struct mp_frame *f = &site->frames[fr];

			mp_json_open(j, NULL, '{');
			mp_json_str(j, "object", mp_trace_str(a->t, f->obj));
			mp_json_u64(j, "vaddr", f->vaddr);
			mp_json_str(j, "symbol", mp_trace_str(a->t, f->sym));
			mp_json_u64(j, "offset", f->sym_off);
			mp_json_close(j, '}');
		}
		mp_json_close(j, ']');
		mp_json_close(j, '}');
	}
	mp_json_close(j, ']');
}

static void json_sim(struct mp_json *j, const struct mp_analysis *a)
{
	mp_json_open(j, "simulated_cache", '{');
	mp_json_u64(j, "buffer_min", a->t->buffer_min);
	mp_json_u64(j, "io_reads", a->sum.io_calls[0]);
	mp_json_u64(j, "io_writes", a->sum.io_calls[1]);
	mp_json_u64(j, "io_bytes", a->sum.io_bytes[0] + a->sum.io_bytes[1]);
	mp_json_u64(j, "io_uring", a->sum.io_uring);
	mp_json_u64(j, "io_fixed", a->sum.io_fixed);
	mp_json_u64(j, "library_io_calls", a->sum.lib_io_calls);
	mp_json_u64(j, "library_io_bytes", a->sum.lib_io_bytes);
	mp_json_u64(j, "vm_ns", a->sum.vm_ns);
	mp_json_u64(j, "loader_vm_ns", a->sum.loader_vm_ns);
	mp_json_open(j, "configs", '[');
	for (size_t i = 0; i < a->nconf; i++) {
		const struct mp_sim_config *c = &a->conf[i];
		const struct mp_sim_result *r = &a->res[i];

		mp_json_open(j, NULL, '{');
		mp_json_str(j, "name", c->name);
		mp_json_str(j, "engine", mp_engine_name(c->engine));
		mp_json_str(j, "backend", c->backend);
		mp_json_str(j, "monitor", mp_sim_monitor_name(c->monitor));
		mp_json_u64(j, "max_regions", c->max_regions);
		mp_json_u64(j, "max_bytes", c->max_bytes);
		mp_json_num(j, "reg_ns", c->reg_ns);
		mp_json_num(j, "reg_ns_per_byte", c->reg_ns_per_byte);
		mp_json_num(j, "dereg_ns", c->dereg_ns);
		mp_json_num(j, "dereg_ns_per_byte", c->dereg_ns_per_byte);
		mp_json_u64(j, "uses", r->uses);
		mp_json_u64(j, "hits", r->hits);
		mp_json_u64(j, "misses", r->misses);
		mp_json_u64(j, "stale_hits", r->stale_hits);
		mp_json_u64(j, "uncached", r->uncached);
		mp_json_u64(j, "registrations", r->registrations);
		mp_json_u64(j, "deregistrations", r->deregistrations);
		mp_json_u64(j, "deregistered_invalidated", r->dereg_invalidated);
		mp_json_u64(j, "deregistered_evicted", r->dereg_evicted);
		mp_json_u64(j, "deregistered_merged", r->dereg_merged);
		mp_json_u64(j, "deregistered_teardown", r->dereg_teardown);
		for (int c2 = 0; c2 < MP_INV_CAUSES; c2++) {
			char key[48];

			snprintf(key, sizeof(key), "invalidated_%s", mp_inv_cause_name((enum mp_inv_cause)c2));
			mp_json_u64(j, key, r->invalidated[c2]);
		}
		mp_json_u64(j, "vm_calls_invalidating", r->ops_invalidating);
		mp_json_u64(j, "max_invalidated_per_call", r->max_per_op);
		json_hist(j, "invalidated_per_call_log2", r->per_op_hist, 16);
		mp_json_u64(j, "peak_regions", r->peak_regions);
		mp_json_u64(j, "peak_bytes", r->peak_bytes);
		mp_json_num(j, "register_ns", r->reg_ns);
		mp_json_num(j, "deregister_ns", r->dereg_ns);
		mp_json_num(j, "monitor_ns", r->monitor_ns);
		mp_json_num(j, "lookup_ns", r->lookup_ns);
		mp_json_num(j, "total_ns", mp_sim_total_ns(r));
		mp_json_num(j, "nocache_ns", r->nocache_ns);
		mp_json_num(j, "saved_ns", r->nocache_ns - mp_sim_total_ns(r));
		mp_json_bool(j, "deregistration_dominates", mp_dereg_dominates(r));
		mp_json_num(j, "deregistration_dominance_factor", mp_dereg_dominance_factor(r));
		mp_json_num(j, "copy_ns_per_byte", c->copy_ns_per_byte);
		mp_json_num(j, "breakeven_bytes_uncached", mp_breakeven_bytes(c, 0));
		mp_json_num(j, "breakeven_bytes_cached", mp_breakeven_bytes(c, r->uses ?
			    (double)r->hits / (double)r->uses : 0.9));
		mp_json_bool(j, "savings_small", mp_verdict_small(a, i));
		mp_json_close(j, '}');
	}
	mp_json_close(j, ']');
	mp_json_close(j, '}');
}

static void json_lib(struct mp_json *j, const struct mp_trace *t)
{
	const struct mp_libprof *lib = &t->lib;
	uint64_t total = lib_total(lib);

	mp_json_open(j, "libmrcache", '{');
	mp_json_u64(j, "dumps", lib->dumps);
	mp_json_bool(j, "used", lib_used(lib));
	for (int k = 0; k < MP_LIB_KINDS; k++) {
		const uint64_t *h = lib->hist[k];

		mp_json_open(j, mp_libprof_kind_name(k), '{');
		mp_json_u64(j, "count", mp_hist_count(h, MP_LIB_BUCKETS));
		mp_json_u64(j, "total_ns", lib->total_ns[k]);
		mp_json_bool(j, "disjoint", mp_libprof_disjoint(k));
		mp_json_num(j, "share", mp_libprof_disjoint(k) && total
			    ? (double)lib->total_ns[k] / (double)total : 0.0);
		mp_json_num(j, "p50_ns", mp_hist_percentile(h, MP_LIB_BUCKETS, 50));
		mp_json_num(j, "p90_ns", mp_hist_percentile(h, MP_LIB_BUCKETS, 90));
		mp_json_num(j, "p99_ns", mp_hist_percentile(h, MP_LIB_BUCKETS, 99));
		json_hist(j, "log2_ns", h, MP_LIB_BUCKETS);
		mp_json_close(j, '}');
	}
	mp_json_close(j, '}');
}

void mp_report_json(FILE *f, const struct mp_analysis *a, int top)
{
	struct mp_json j;

	mp_json_init(&j, f);
	mp_json_open(&j, NULL, '{');
	mp_json_str(&j, "command", a->t->command ? a->t->command : "");
	mp_json_u64(&j, "duration_ns", a->t->duration_ns);
	mp_json_u64(&j, "processes", a->sum.processes);
	mp_json_u64(&j, "exit_status", (uint64_t)a->t->exit_status);
	mp_json_u64(&j, "tracing_overhead_ns", a->t->overhead_ns);
	mp_json_str(&j, "unwind", a->t->unwind ? "dwarf" : "scan");
	mp_json_u64(&j, "program_cpu_ns", a->t->program_cpu_ns);
	mp_json_u64(&j, "tracer_cpu_ns", a->t->tracer_cpu_ns);
	json_vm(&j, a);
	json_sites(&j, a, top);
	json_sim(&j, a);
	json_lib(&j, a->t);
	mp_json_close(&j, '}');
}
