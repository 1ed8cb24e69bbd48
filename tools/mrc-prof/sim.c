/* SPDX-License-Identifier: MIT */
/*
 * sim.c - the simulated cache: per address space, a sorted array of
 * non-overlapping page-aligned regions with an LRU stamp.  Limits evict
 * the least recently used region; monitor "none" leaves invalidated
 * regions in place and counts the hits on them as stale (the corruption
 * hazard a cache without a monitor has).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "sim.h"
#include "spaces.h"

#define PAGE 4096ull

struct region {
	uint64_t start, end, stamp;
	int stale;
};

struct space {			/* one process: limits apply per process */
	uint32_t tgid;		/* first: spaces.h */
	struct mp_vm_state vm;
	struct region *v;
	size_t n, cap;
	uint64_t bytes;
};

struct sim {
	const struct mp_sim_config *c;
	struct mp_sim_result *r;
	struct space *sp;
	size_t nsp;
	uint64_t clock, regions, bytes;
};

static const char *const monitor_names[MP_MON_COUNT] = {
	"kernel", "bpf", "uffd", "hooks", "none",
};

const char *mp_sim_monitor_name(enum mp_sim_monitor m)
{
	return m < MP_MON_COUNT ? monitor_names[m] : "invalid";
}

const char *mp_engine_name(enum mp_engine e)
{
	return e == MP_ENGINE_LIB ? "libmrcache" : "sim";
}

/* Monitor costs: bpf from docs measured on this machine kind
 * (shared/notes/ebpf.md: +275 ns per unmapping call, +350 ns more when it
 * hits a watched range); uffd from a watched MADV_DONTNEED (4.9 vs
 * 0.4 us); hooks from UCX's 0.2-0.6 us per invalidated region; kernel
 * assumed close to bpf without the per-syscall hook. */
static void set_monitor(struct mp_sim_config *c, enum mp_sim_monitor m)
{
	static const double cost[MP_MON_COUNT][4] = {
		/* watch, unwatch, per VM call, per invalidated region */
		[MP_MON_KERNEL] = { 500, 300, 50, 200 },
		[MP_MON_BPF] = { 300, 300, 275, 350 },
		[MP_MON_UFFD] = { 1500, 1000, 0, 4500 },
		[MP_MON_HOOKS] = { 50, 50, 100, 400 },
		[MP_MON_NONE] = { 0, 0, 0, 0 },
	};

	c->monitor = m;
	c->watch_ns = cost[m][0];
	c->unwatch_ns = cost[m][1];
	c->vmcall_ns = cost[m][2];
	c->inval_ns = cost[m][3];
}

/* Backend costs: verbs is the production model (16 us + 0.06 ns/byte to
 * register; deregistration assumed half of it); uring is fitted to the
 * io_uring buffer updates measured on this kernel (docs/backends.md:
 * 4 KiB 0.6 us, 1 MiB 16 us, 16 MiB 245 us; deregistration a third). */
static int set_backend(struct mp_sim_config *c, const char *name)
{
	if (!strcmp(name, "verbs")) {
		c->reg_ns = 16000, c->reg_ns_per_byte = 0.06;
		c->dereg_ns = 8000, c->dereg_ns_per_byte = 0.03;
	} else if (!strcmp(name, "uring")) {
		c->reg_ns = 600, c->reg_ns_per_byte = 0.0145;
		c->dereg_ns = 200, c->dereg_ns_per_byte = 0.0048;
	} else {
		return -EINVAL;
	}
	snprintf(c->backend, sizeof(c->backend), "%s", name);
	return 0;
}

void mp_sim_config_default(struct mp_sim_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "default");
	set_backend(c, "verbs");
	set_monitor(c, MP_MON_KERNEL);
	c->lookup_ns = 50;
	c->copy_ns_per_byte = 0.1;	/* memcpy at 10 GB/s */
}

static int parse_size(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || end == v || *v == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	}
	if (*end)
		return -EINVAL;
	*out = n;
	return 0;
}

static int parse_double(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return errno || end == v || *end || *out < 0 ? -EINVAL : 0;
}

static int parse_key(struct mp_sim_config *c, const char *k, const char *v)
{
	double us;

	if (!strcmp(k, "max_regions"))
		return parse_size(v, &c->max_regions);
	if (!strcmp(k, "max_bytes"))
		return parse_size(v, &c->max_bytes);
	if (!strcmp(k, "backend"))
		return set_backend(c, v);
	if (!strcmp(k, "engine")) {
		if (!strcmp(v, "sim"))
			c->engine = MP_ENGINE_SIM;
		else if (!strcmp(v, "libmrcache"))
			c->engine = MP_ENGINE_LIB;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(k, "monitor")) {
		for (int m = 0; m < MP_MON_COUNT; m++)
			if (!strcmp(v, monitor_names[m])) {
				set_monitor(c, (enum mp_sim_monitor)m);
				return 0;
			}
		return -EINVAL;
	}
	if (!strcmp(k, "reg_us") || !strcmp(k, "dereg_us")) {
		if (parse_double(v, &us))
			return -EINVAL;
		*(k[0] == 'r' ? &c->reg_ns : &c->dereg_ns) = us * 1000;
		return 0;
	}
	if (!strcmp(k, "reg_ns_per_byte"))
		return parse_double(v, &c->reg_ns_per_byte);
	if (!strcmp(k, "dereg_ns_per_byte"))
		return parse_double(v, &c->dereg_ns_per_byte);
	if (!strcmp(k, "lookup_ns"))
		return parse_double(v, &c->lookup_ns);
	if (!strcmp(k, "watch_ns"))
		return parse_double(v, &c->watch_ns);
	if (!strcmp(k, "unwatch_ns"))
		return parse_double(v, &c->unwatch_ns);
	if (!strcmp(k, "vmcall_ns"))
		return parse_double(v, &c->vmcall_ns);
	if (!strcmp(k, "inval_ns"))
		return parse_double(v, &c->inval_ns);
	if (!strcmp(k, "copy_ns_per_byte"))
		return parse_double(v, &c->copy_ns_per_byte);
	return -ENOENT;
}

int mp_sim_config_parse(const char *spec, struct mp_sim_config *c)
{
	char buf[512], *save = NULL, *tok, *colon;
	const char *body = spec;

	mp_sim_config_default(c);
	if (strlen(spec) >= sizeof(buf))
		goto bad;
	colon = strchr(spec, ':');
	if (colon) {
		size_t n = (size_t)(colon - spec);

		if (!n || n >= sizeof(c->name))
			goto bad;
		memcpy(c->name, spec, n);
		c->name[n] = 0;
		body = colon + 1;
	} else {
		/* "NAME" alone is the default configuration under that name. */
		snprintf(c->name, sizeof(c->name), "%.*s", (int)sizeof(c->name) - 1, spec);
		if (!strchr(spec, '='))
			body = "";
	}
	snprintf(buf, sizeof(buf), "%s", body);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		int err;

		if (!eq)
			goto bad;
		*eq = 0;
		err = parse_key(c, tok, eq + 1);
		if (err == -ENOENT) {
			fprintf(stderr, "mrc-prof: config '%s': unknown key '%s'\n", spec, tok);
			return -EINVAL;
		}
		if (err) {
			fprintf(stderr, "mrc-prof: config '%s': bad value for %s: '%s'\n",
				spec, tok, eq + 1);
			return -EINVAL;
		}
	}
	return 0;
bad:
	fprintf(stderr, "mrc-prof: config '%s': expected NAME:key=value,...\n", spec);
	return -EINVAL;
}

/* --- the cache --- */

static struct space *space_get(struct sim *s, uint32_t tgid)
{
	return mp_space_get((void **)&s->sp, &s->nsp, sizeof(struct space), tgid, NULL);
}

double mp_sim_reg_ns(const struct mp_sim_config *c, uint64_t len)
{
	return c->reg_ns + c->reg_ns_per_byte * (double)len;
}

double mp_sim_dereg_ns(const struct mp_sim_config *c, uint64_t len)
{
	return c->dereg_ns + c->dereg_ns_per_byte * (double)len;
}

void mp_sim_count_op(struct mp_sim_result *r, uint32_t n)
{
	int b = 31 - __builtin_clz(n);

	r->ops_invalidating++;
	r->per_op_hist[b < 16 ? b : 15]++;
	if (n > r->max_per_op)
		r->max_per_op = n;
}

/* First region whose end is above addr. */
static size_t first_above(const struct space *sp, uint64_t addr)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sp->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void drop(struct sim *s, struct space *sp, size_t i)
{
	uint64_t len = sp->v[i].end - sp->v[i].start;

	s->r->deregistrations++;
	s->r->dereg_ns += mp_sim_dereg_ns(s->c, len);
	s->r->monitor_ns += s->c->unwatch_ns;
	s->regions--;
	s->bytes -= len;
	sp->bytes -= len;
	memmove(&sp->v[i], &sp->v[i + 1], (sp->n - i - 1) * sizeof(sp->v[0]));
	sp->n--;
}

static void evict_lru(struct sim *s, struct space *sp, uint64_t keep_start)
{
	size_t best = sp->n;

	for (size_t i = 0; i < sp->n; i++)
		if (sp->v[i].start != keep_start &&
		    (best == sp->n || sp->v[i].stamp < sp->v[best].stamp))
			best = i;
	if (best < sp->n) {
		s->r->dereg_evicted++;
		drop(s, sp, best);
	}
}

static int over_limits(const struct sim *s, const struct space *sp)
{
	return (s->c->max_regions && sp->n > s->c->max_regions) ||
	       (s->c->max_bytes && sp->bytes > s->c->max_bytes);
}

static int use_buffer(struct sim *s, struct space *sp, uint64_t addr, uint64_t len)
{
	uint64_t start = addr & ~(PAGE - 1), end = (addr + len + PAGE - 1) & ~(PAGE - 1);
	struct mp_sim_result *r = s->r;
	size_t i = first_above(sp, start), j;
	struct region *reg;

	if (!len || end <= start)
		return 0;
	r->uses++;
	r->lookup_ns += s->c->lookup_ns;
	r->nocache_ns += mp_sim_reg_ns(s->c, end - start) + mp_sim_dereg_ns(s->c, end - start);
	if (i < sp->n && sp->v[i].start <= start && end <= sp->v[i].end) {
		r->hits++;
		r->stale_hits += (uint64_t)sp->v[i].stale;
		sp->v[i].stamp = ++s->clock;
		return 0;
	}
	r->misses++;
	/* Merge with every overlapping region, as lib/cache does. */
	for (j = i; j < sp->n && sp->v[j].start < end;) {
		if (sp->v[j].start < start)
			start = sp->v[j].start;
		if (sp->v[j].end > end)
			end = sp->v[j].end;
		r->dereg_merged++;
		drop(s, sp, j);
	}
	if (s->c->max_bytes && end - start > s->c->max_bytes) {
		r->uncached++;	/* registered for this use only */
		r->registrations++, r->deregistrations++;
		r->reg_ns += mp_sim_reg_ns(s->c, end - start);
		r->dereg_ns += mp_sim_dereg_ns(s->c, end - start);
		return 0;
	}
	if (sp->n == sp->cap) {
		size_t ncap = sp->cap ? sp->cap * 2 : 16;
		struct region *v = realloc(sp->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		sp->v = v;
		sp->cap = ncap;
	}
	memmove(&sp->v[i + 1], &sp->v[i], (sp->n - i) * sizeof(sp->v[0]));
	reg = &sp->v[i];
	*reg = (struct region){ .start = start, .end = end, .stamp = ++s->clock };
	sp->n++;
	r->registrations++;
	r->reg_ns += mp_sim_reg_ns(s->c, end - start);
	r->monitor_ns += s->c->watch_ns;
	s->regions++;
	s->bytes += end - start;
	sp->bytes += end - start;
	while (over_limits(s, sp) && sp->n > 1)
		evict_lru(s, sp, start);
	if (s->regions > r->peak_regions)
		r->peak_regions = s->regions;
	if (s->bytes > r->peak_bytes)
		r->peak_bytes = s->bytes;
	return 0;
}

static uint32_t invalidate(struct sim *s, struct space *sp, uint64_t start, uint64_t len,
			   enum mp_inv_cause cause)
{
	uint64_t end = (start + len + PAGE - 1) & ~(PAGE - 1);
	uint32_t n = 0;
	size_t i;

	start &= ~(PAGE - 1);
	if (!len)
		return 0;
	for (i = first_above(sp, start); i < sp->n && sp->v[i].start < end;) {
		if (sp->v[i].stale) {
			i++;
			continue;
		}
		n++;
		s->r->invalidated[cause]++;
		s->r->monitor_ns += s->c->inval_ns;
		if (s->c->monitor == MP_MON_NONE) {
			sp->v[i++].stale = 1;	/* nobody tells the cache */
			continue;
		}
		s->r->dereg_invalidated++;
		drop(s, sp, i);
	}
	return n;
}

static void teardown(struct sim *s, struct space *sp)
{
	while (sp->n) {
		s->r->dereg_teardown++;
		drop(s, sp, sp->n - 1);
	}
}

static uint32_t on_vm_event(struct sim *s, struct space *sp, const struct mp_event *e)
{
	struct mp_range rg[2];
	enum mp_inv_cause cause;
	int nr = mp_vm_ranges(&sp->vm, e, rg, &cause);
	uint32_t n = 0;

	if (mp_vm_unmapping_call(e))
		s->r->monitor_ns += s->c->vmcall_ns;
	for (int i = 0; i < nr; i++)
		n += invalidate(s, sp, rg[i].start, rg[i].len, cause);
	if (n)
		mp_sim_count_op(s->r, n);
	return n;
}

int mp_sim_run(const struct mp_trace *t, const struct mp_sim_config *c,
	       struct mp_sim_result *r, uint32_t *per_event)
{
	struct sim s = { .c = c, .r = r };
	int err = 0;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; !err && i < t->nev; i++) {
		const struct mp_event *e = &t->ev[i];
		struct space *sp = space_get(&s, e->tgid);
		uint32_t n = 0;

		if (!sp) {
			err = -ENOMEM;
			break;
		}
		if (e->kind < MP_VM_KINDS)
			n = on_vm_event(&s, sp, e);
		else if (mp_event_is_buffer(e, 0))
			err = use_buffer(&s, sp, e->a[1], e->a[2]);
		else if (e->kind == MP_EXEC || e->kind == MP_EXIT) {
			teardown(&s, sp);
			memset(&sp->vm, 0, sizeof(sp->vm));
		}
		if (per_event)
			per_event[i] = n;
	}
	for (size_t k = 0; k < s.nsp; k++) {
		teardown(&s, &s.sp[k]);
		free(s.sp[k].v);
	}
	free(s.sp);
	return err;
}

int mp_cache_run(const struct mp_trace *t, const struct mp_sim_config *c,
		 struct mp_sim_result *r, uint32_t *per_event)
{
	if (c->engine == MP_ENGINE_LIB)
		return mp_libreplay_run(t, c, r, per_event);
	return mp_sim_run(t, c, r, per_event);
}

int mp_dereg_dominates(const struct mp_sim_result *r)
{
	return r->dereg_ns > r->reg_ns && r->dereg_ns > r->monitor_ns;
}

double mp_dereg_dominance_factor(const struct mp_sim_result *r)
{
	double rival = r->reg_ns > r->monitor_ns ? r->reg_ns : r->monitor_ns;

	return r->dereg_ns > 0 ? rival / r->dereg_ns : 0;
}

double mp_sim_total_ns(const struct mp_sim_result *r)
{
	return r->reg_ns + r->dereg_ns + r->lookup_ns + r->monitor_ns;
}
