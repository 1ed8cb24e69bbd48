/* SPDX-License-Identifier: MIT */
/*
 * report.c - what libmrc-audit found, per process: text (default) or one
 * JSON object (MRC_AUDIT_JSON=1).  Runs under mra.lock.  docs/audit.md
 * describes every field.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "json.h"
#include "audit.h"

static const char *const mra_how_names[MRA_HOW_N] = {
	"ibv_reg_mr", "ibv_reg_mr_iova", "ibv_reg_mr_iova2", "ibv_rereg_mr",
};

const char *mra_cause_name(uint32_t cause)
{
	switch (cause) {
	case MRMON_CAUSE_UNMAP:		return "UNMAP (munmap, mremap, mmap MAP_FIXED over it)";
	case MRMON_CAUSE_CLEAR:		return "CLEAR (madvise DONTNEED/FREE, copy-on-write, truncation, collapse, or a VMA/huge-page split)";
	case MRMON_CAUSE_RELEASE:	return "RELEASE (the address space is torn down)";
	case MRMON_CAUSE_MIGRATE:	return "MIGRATE (pages moved)";
	case MRMON_CAUSE_EXCLUSIVE:	return "EXCLUSIVE (device-exclusive access)";
	case MRA_CAUSE_REGISTERING:	return "invalidated while it was being registered";
	case MRA_CAUSE_LOST:		return "unknown (the witness's events were lost)";
	default:			return "OTHER (a VM event newer than the module's ABI)";
	}
}

static const char *mra_cause_short(uint32_t cause)
{
	static const char *const n[] = { "OTHER", "UNMAP", "CLEAR", "RELEASE", "MIGRATE",
					 "EXCLUSIVE", "OTHER", "OVERFLOW" };

	if (cause == MRA_CAUSE_REGISTERING)
		return "REGISTERING";
	if (cause == MRA_CAUSE_LOST)
		return "LOST";
	return cause < sizeof(n) / sizeof(n[0]) ? n[cause] : "OTHER";
}

struct mra_live_sum {
	uint64_t n, invalid, at_risk, at_risk_ns, now;
};

static void mra_live_add(struct mra_reg *r, void *arg)
{
	struct mra_live_sum *s = arg;

	if (!r->live)
		return;
	s->n++;
	if (!r->invalid)
		return;
	s->invalid++;
	if (r->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)) {
		s->at_risk++;
		s->at_risk_ns += s->now - r->inval_ns;
	}
}

struct mra_find {
	uint64_t id;
	struct mra_reg *r;
};

static void mra_find_one(struct mra_reg *r, void *arg)
{
	struct mra_find *f = arg;

	if (r->id == f->id)
		f->r = r;
}

static struct mra_reg *mra_reg_any(uint64_t id)
{
	struct mra_find f = { id, NULL };

	mra_live_foreach(mra_find_one, &f);
	for (struct mra_reg *r = mra.kept; r && !f.r; r = r->next)
		if (r->id == id)
			f.r = r;
	return f.r;
}

/* The frames outside this library, as backtrace_symbols() writes them. */
static char **mra_frames(void *const *stack, int depth, int *first)
{
	Dl_info self, d;

	*first = 0;
	if (dladdr((void *)mra_frames, &self))
		while (*first < depth && dladdr(stack[*first], &d) && d.dli_fbase == self.dli_fbase)
			(*first)++;
	return depth > *first ? backtrace_symbols(stack + *first, depth - *first) : NULL;
}

static void mra_text_stack(FILE *f, void *const *stack, int depth)
{
	int first;
	char **s = mra_frames(stack, depth, &first);

	for (int i = 0; s && i < depth - first; i++)
		fprintf(f, "        #%d %s\n", i, s[i]);
	free(s);
}

static double mra_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* Each cause in `causes`, in order: " A B" as text, "A","B" in JSON. */
static void mra_causes_print(FILE *f, uint32_t causes, bool json)
{
	unsigned n = 0;

	for (uint32_t c = 1; c <= MRA_CAUSE_LOST; c++)
		if ((c <= MRMON_CAUSE_OVERFLOW || c >= MRA_CAUSE_REGISTERING) &&
		    causes & mra_cause_bit(c))
			fprintf(f, json ? "%s\"%s\"" : "%s%s", !json ? " " : n++ ? "," : "",
				mra_cause_short(c));
}

static void mra_text_causes(FILE *f, uint32_t causes)
{
	fprintf(f, "    every cause it met:");
	mra_causes_print(f, causes, false);
	fputc('\n', f);
}

static void mra_text_pages(FILE *f, const char *pages)
{
	if (!strcmp(pages, "changed"))
		fprintf(f, "    its pages: re-checked, other pages are mapped there now\n");
	else if (!strcmp(pages, "busy"))
		fprintf(f, "    its pages: not re-checked, an invalidation of the range was in flight\n");
	else if (!strcmp(pages, "unknown"))
		fprintf(f, "    its pages: not re-checked (%s): a split in the same 2 MiB window "
			"would look the same\n", mra.pagemap_fd < 0 ? mra.pages_why :
			"the pinned frames were not known");
}

static const char mra_call_unseen[] =
	"not seen among this process's libc calls (munmap, mremap, madvise, mmap MAP_FIXED): "
	"a raw system call, libc's own (free() unmaps large blocks inside libc), io_uring, "
	"another process or the kernel";

static void mra_text_call(FILE *f, const struct mra_vmcall *c)
{
	if (!c) {
		fprintf(f, "    the call that did it: %s\n", mra_call_unseen);
		return;
	}
	fprintf(f, "    the call that did it: %s [0x%" PRIxPTR ", +%zu) on thread %d, at:\n",
		c->name, c->start, (size_t)(c->end - c->start), c->tid);
	mra_text_stack(f, c->stack, c->depth);
}

static void mra_text_stale(FILE *f, unsigned i, const struct mra_stale *s, const struct mra_reg *r)
{
	fprintf(f, "  stale use #%u: %s, lkey 0x%x, [0x%" PRIxPTR ", +%zu), %.3f s into the run\n",
		i + 1, s->op, s->lkey, s->va, s->len, (double)(s->ns - mra.start_ns) / 1e9);
	if (!r) {
		fprintf(f, "    registration #%" PRIu64 " (record not kept)\n", s->reg_id);
	} else {
		fprintf(f, "    registration #%" PRIu64 ": %s [0x%" PRIxPTR ", +%zu) lkey 0x%x rkey 0x%x access 0x%x, %.3f s into the run, at:\n",
			r->id, mra_how_names[r->how], r->va, r->len, r->lkey, r->rkey, r->access,
			(double)(r->reg_ns - mra.start_ns) / 1e9);
		mra_text_stack(f, r->stack, r->depth);
		fprintf(f, "    invalidated by %s", mra_cause_name(r->cause));
		if (r->nparts)
			fprintf(f, " over [0x%" PRIxPTR ", 0x%" PRIxPTR ")", r->parts[0].start, r->parts[0].end);
		fprintf(f, ", %.3f ms after the registration, %.3f ms before this use\n",
			mra_ms(r->inval_ns - r->reg_ns), mra_ms(s->ns - r->inval_ns));
		if (r->causes & ~mra_cause_bit(r->cause))
			mra_text_causes(f, r->causes);
		mra_text_pages(f, s->pages);
		mra_text_call(f, r->call);
	}
	fprintf(f, "    used at:\n");
	mra_text_stack(f, s->stack, s->depth);
}

struct mra_totals {
	uint64_t regs, posts[4], valid, stale, untouched, unknown, inl, empty;
};

static void mra_sum(struct mra_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < MRA_HOW_N; i++)
		t->regs += mra.st.regs[i];
	for (const struct mra_tcount *c = mra.counts; c; c = c->next) {
		for (int i = 0; i < 4; i++)
			t->posts[i] += __atomic_load_n(&c->posts[i], __ATOMIC_RELAXED);
		t->valid += __atomic_load_n(&c->sge_valid, __ATOMIC_RELAXED);
		t->stale += __atomic_load_n(&c->sge_stale, __ATOMIC_RELAXED);
		t->untouched += __atomic_load_n(&c->sge_untouched, __ATOMIC_RELAXED);
		t->unknown += __atomic_load_n(&c->sge_unknown, __ATOMIC_RELAXED);
		t->inl += __atomic_load_n(&c->sge_inline, __ATOMIC_RELAXED);
		t->empty += __atomic_load_n(&c->sge_empty, __ATOMIC_RELAXED);
	}
}

static uint64_t mra_mean(uint64_t total, uint64_t n)
{
	return n ? total / n : 0;
}

static void mra_text(FILE *f, const char *why, const struct mra_totals *t, const struct mra_live_sum *l)
{
	const struct mra_stats *s = &mra.st;

	fprintf(f, "mrc-audit: pid %d %s (report at %s)\n", (int)getpid(), mra.prog, why);
	if (mra.w.kind == MRA_WITNESS_MRMON)
		fprintf(f, "  witness: /dev/mrmon, ABI %d (events %" PRIu64 ", overflows %" PRIu64 ", watch errors %" PRIu64 ")\n",
			mra.w.abi, mra.w.events, mra.w.overflows, mra.w.watch_errors);
	else if (mra.w.kind == MRA_WITNESS_UFFD)
		fprintf(f, "  witness: userfaultfd, weaker than /dev/mrmon: late by a moment, blind to "
			"truncation, hole punching and io_uring (docs/audit.md); %s (events %" PRIu64
			", overflows %" PRIu64 ", watch errors %" PRIu64 ")\n",
			mra.w.why[0] ? mra.w.why : "chosen", mra.w.events, mra.w.overflows,
			mra.w.watch_errors);
	else
		fprintf(f, "  witness: none: %s; no use can be called stale\n", mra.w.why[0] ? mra.w.why : "not started");
	fprintf(f, "  registrations %" PRIu64 " (", t->regs);
	for (int i = 0; i < MRA_HOW_N; i++)
		fprintf(f, "%s%s %" PRIu64, i ? ", " : "", mra_how_names[i], s->regs[i]);
	fprintf(f, "), failed %" PRIu64 ", not watched %" PRIu64 "; deregistrations %" PRIu64 ", live %" PRIu64 "\n",
		s->reg_fail, s->unwatched, s->deregs, t->regs > s->deregs ? t->regs - s->deregs : 0);
	if (s->dmabuf)
		fprintf(f, "  ibv_reg_dmabuf_mr %" PRIu64 ": not audited (device memory; their uses count as unknown keys)\n", s->dmabuf);
	fprintf(f, "  time in registration %.3f ms (mean %.1f us), in deregistration %.3f ms (mean %.1f us)\n",
		mra_ms(s->reg_ns), (double)mra_mean(s->reg_ns, t->regs + s->reg_fail) / 1e3,
		mra_ms(s->dereg_ns), (double)mra_mean(s->dereg_ns, s->deregs + s->dereg_fail) / 1e3);
	fprintf(f, "  posts: send %" PRIu64 ", recv %" PRIu64 ", srq_recv %" PRIu64 ", ibv_wr_set_sge* %" PRIu64 "; SGEs: valid %" PRIu64 ", stale %" PRIu64
		", in an untouched part of an invalidated registration %" PRIu64 ", unknown lkey %" PRIu64 ", inline %" PRIu64 ", empty %" PRIu64 "\n",
		t->posts[0], t->posts[1], t->posts[2], t->posts[3], t->valid, t->stale, t->untouched, t->unknown, t->inl, t->empty);
	fprintf(f, "  invalidated while registered: %" PRIu64 " (%" PRIu64 " still registered); invalidation to deregistration: mean %.3f ms, max %.3f ms over %" PRIu64 "\n",
		s->invalidated, l->invalid, mra_ms(mra_mean(s->inval_to_dereg_ns, s->inval_to_dereg_n)),
		mra_ms(s->inval_to_dereg_max_ns), s->inval_to_dereg_n);
	fprintf(f, "  at risk (invalidated with its rkey still valid for remote access): %" PRIu64 " (%" PRIu64 " still registered), %.3f ms in all, longest %.3f ms\n",
		s->at_risk + l->at_risk, l->at_risk, mra_ms(s->at_risk_ns + l->at_risk_ns), mra_ms(s->at_risk_max_ns));
	if (mra.pagemap_fd >= 0)
		fprintf(f, "  CLEARs re-checked against the pinned pages: %" PRIu64 " (harmless %" PRIu64
			", pages changed %" PRIu64 ", busy %" PRIu64 "); registrations with their pages known %"
			PRIu64 ", without %" PRIu64 "\n", s->rechecks, s->clear_harmless, s->clear_changed,
			s->recheck_busy, s->baselines, s->no_baseline);
	else if (mra.w.kind != MRA_WITNESS_NONE)
		fprintf(f, "  CLEARs not re-checked: %s\n", mra.pages_why);
	for (unsigned i = 0; i < s->nstale; i++)
		mra_text_stale(f, i, &s->stale[i], mra_reg_any(s->stale[i].reg_id));
	if (s->stale_total > s->nstale)
		fprintf(f, "  ... %" PRIu64 " more stale uses not shown\n", s->stale_total - s->nstale);
	fprintf(f, "mrc-audit: pid %d: %" PRIu64 " stale use%s\n", (int)getpid(), s->stale_total,
		s->stale_total == 1 ? "" : "s");
}

static void mra_json_stack(FILE *f, void *const *stack, int depth)
{
	int first;
	char **s = mra_frames(stack, depth, &first);

	fputc('[', f);
	for (int i = 0; s && i < depth - first; i++) {
		if (i)
			fputc(',', f);
		json_string(f, s[i]);
	}
	fputc(']', f);
	free(s);
}

static void mra_json_call(FILE *f, const struct mra_vmcall *c)
{
	if (!c) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"name\":\"%s\",\"addr\":%" PRIuPTR ",\"length\":%zu,\"tid\":%d,\"stack\":",
		c->name, c->start, (size_t)(c->end - c->start), c->tid);
	mra_json_stack(f, c->stack, c->depth);
	fputc('}', f);
}

static void mra_json_stale(FILE *f, const struct mra_stale *s, const struct mra_reg *r)
{
	fprintf(f, "{\"op\":\"%s\",\"lkey\":%u,\"addr\":%" PRIuPTR ",\"length\":%zu,\"time_ns\":%" PRIu64 ",\"registration\":",
		s->op, s->lkey, s->va, s->len, s->ns - mra.start_ns);
	if (!r) {
		fprintf(f, "{\"id\":%" PRIu64 "}", s->reg_id);
	} else {
		fprintf(f, "{\"id\":%" PRIu64 ",\"call\":\"%s\",\"addr\":%" PRIuPTR ",\"length\":%zu,\"lkey\":%u,\"rkey\":%u,\"access\":%d,\"time_ns\":%" PRIu64 ",\"stack\":",
			r->id, mra_how_names[r->how], r->va, r->len, r->lkey, r->rkey, r->access,
			r->reg_ns - mra.start_ns);
		mra_json_stack(f, r->stack, r->depth);
		fprintf(f, "},\"invalidation\":{\"cause\":\"%s\",\"causes\":[",
			mra_cause_short(r->cause));
		mra_causes_print(f, r->causes, true);
		fprintf(f, "],\"pages\":\"%s\",\"start\":%" PRIuPTR ",\"end\":%" PRIuPTR
			",\"after_registration_ns\":%" PRIu64 ",\"before_use_ns\":%" PRIu64 ",\"call\":",
			s->pages, r->nparts ? r->parts[0].start : 0,
			r->nparts ? r->parts[0].end : 0, r->inval_ns - r->reg_ns, s->ns - r->inval_ns);
		mra_json_call(f, r->call);
		fputc('}', f);
	}
	fprintf(f, ",\"stack\":");
	mra_json_stack(f, s->stack, s->depth);
	fputc('}', f);
}

static void mra_json(FILE *f, const char *why, const struct mra_totals *t, const struct mra_live_sum *l)
{
	const struct mra_stats *s = &mra.st;

	fprintf(f, "{\"pid\":%d,\"program\":", (int)getpid());
	json_string(f, mra.prog);
	fprintf(f, ",\"reason\":");
	json_string(f, why);
	if (mra.w.kind == MRA_WITNESS_MRMON)
		fprintf(f, ",\"witness\":{\"kind\":\"mrmon\",\"abi\":%d,\"events\":%" PRIu64 ",\"overflows\":%" PRIu64 ",\"watch_errors\":%" PRIu64 "}",
			mra.w.abi, mra.w.events, mra.w.overflows, mra.w.watch_errors);
	else if (mra.w.kind == MRA_WITNESS_UFFD) {
		fprintf(f, ",\"witness\":{\"kind\":\"uffd\",\"events\":%" PRIu64 ",\"overflows\":%" PRIu64 ",\"watch_errors\":%" PRIu64 ",\"why\":",
			mra.w.events, mra.w.overflows, mra.w.watch_errors);
		json_string(f, mra.w.why);
		fputc('}', f);
	} else {
		fprintf(f, ",\"witness\":{\"kind\":\"none\",\"why\":");
		json_string(f, mra.w.why);
		fputc('}', f);
	}
	fprintf(f, ",\"registrations\":{\"total\":%" PRIu64, t->regs);
	for (int i = 0; i < MRA_HOW_N; i++)
		fprintf(f, ",\"%s\":%" PRIu64, mra_how_names[i], s->regs[i]);
	fprintf(f, ",\"failed\":%" PRIu64 ",\"not_watched\":%" PRIu64 ",\"dmabuf_not_audited\":%" PRIu64 ",\"live\":%" PRIu64 "}",
		s->reg_fail, s->unwatched, s->dmabuf, t->regs > s->deregs ? t->regs - s->deregs : 0);
	fprintf(f, ",\"deregistrations\":{\"total\":%" PRIu64 ",\"failed\":%" PRIu64 "}", s->deregs, s->dereg_fail);
	fprintf(f, ",\"time_ns\":{\"registration\":%" PRIu64 ",\"deregistration\":%" PRIu64 "}", s->reg_ns, s->dereg_ns);
	fprintf(f, ",\"posts\":{\"send\":%" PRIu64 ",\"recv\":%" PRIu64 ",\"srq_recv\":%" PRIu64 ",\"wr_set_sge\":%" PRIu64 "}",
		t->posts[0], t->posts[1], t->posts[2], t->posts[3]);
	fprintf(f, ",\"sges\":{\"valid\":%" PRIu64 ",\"stale\":%" PRIu64 ",\"untouched\":%" PRIu64 ",\"unknown_key\":%" PRIu64 ",\"inline\":%" PRIu64 ",\"empty\":%" PRIu64 "}",
		t->valid, t->stale, t->untouched, t->unknown, t->inl, t->empty);
	fprintf(f, ",\"invalidated\":{\"total\":%" PRIu64 ",\"still_registered\":%" PRIu64 "}", s->invalidated, l->invalid);
	fprintf(f, ",\"invalidation_to_dereg_ns\":{\"count\":%" PRIu64 ",\"mean\":%" PRIu64 ",\"max\":%" PRIu64 "}",
		s->inval_to_dereg_n, mra_mean(s->inval_to_dereg_ns, s->inval_to_dereg_n), s->inval_to_dereg_max_ns);
	fprintf(f, ",\"at_risk\":{\"count\":%" PRIu64 ",\"still_registered\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 "}",
		s->at_risk + l->at_risk, l->at_risk, s->at_risk_ns + l->at_risk_ns, s->at_risk_max_ns);
	fprintf(f, ",\"clear_recheck\":{\"enabled\":%s,\"why_not\":", mra.pagemap_fd >= 0 ? "true" : "false");
	json_string(f, mra.pagemap_fd >= 0 ? "" : mra.pages_why);
	fprintf(f, ",\"registrations_with_pages\":%" PRIu64 ",\"without\":%" PRIu64 ",\"rechecks\":%" PRIu64
		",\"harmless\":%" PRIu64 ",\"pages_changed\":%" PRIu64 ",\"busy\":%" PRIu64 "}",
		s->baselines, s->no_baseline, s->rechecks, s->clear_harmless, s->clear_changed, s->recheck_busy);
	fprintf(f, ",\"stale_uses\":%" PRIu64 ",\"stale\":[", s->stale_total);
	for (unsigned i = 0; i < s->nstale; i++) {
		if (i)
			fputc(',', f);
		mra_json_stale(f, &s->stale[i], mra_reg_any(s->stale[i].reg_id));
	}
	fprintf(f, "]}\n");
}

/* A registration still live and invalidated only by CLEARs: settle it
 * before it is counted (regs.c, mra_reg_recheck). */
static void mra_live_recheck(struct mra_reg *r, void *arg)
{
	(void)arg;
	mra_reg_recheck(r);
}

void mra_report(FILE *f, bool json, const char *why)
{
	struct mra_live_sum l = { .now = mra_now() };
	struct mra_totals t;

	mra_sum(&t);
	mra_live_foreach(mra_live_recheck, NULL);
	mra_live_foreach(mra_live_add, &l);
	if (json)
		mra_json(f, why, &t, &l);
	else
		mra_text(f, why, &t, &l);
	fflush(f);
}

/* --fatal: the one stale use, before SIGTRAP. */
void mra_report_stale_now(const struct mra_stale *s, const struct mra_reg *r)
{
	fprintf(stderr, "mrc-audit: pid %d: stale use (--fatal: SIGTRAP follows)\n", (int)getpid());
	mra_text_stale(stderr, 0, s, r);
	fflush(stderr);
}
