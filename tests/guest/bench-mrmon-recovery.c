/* SPDX-License-Identifier: MIT */
/*
 * bench-mrmon-recovery: what a harmless CLEAR costs with REVALIDATE,
 * against what it costs without it (a deregistration and a registration),
 * on a 4 KiB range pinned by ibv_reg_mr over Soft-RoCE, in one run:
 *   reg         ibv_reg_mr of 4 KiB
 *   rereg       ibv_dereg_mr + ibv_reg_mr of 4 KiB (recovery without it)
 *   recovery    after an mprotect split 1 MiB away in the same 2 MiB
 *               window: read the CLEAR event, REVALIDATE (the library's
 *               path)
 *   batched     the same for BATCH watches in the window, one read and one
 *               REVALIDATE batch for all of them (what the library does
 *               when it drains a split's events): per watch
 *   ioctl       HANDSHAKE, the cost of any ioctl (the floor)
 *   library     mrcache_get of a cached 4 KiB region (verbs backend) right
 *               after a split in its window (the library's recovery:
 *               drain, REVALIDATE, hit) against right after MADV_DONTNEED
 *               and a write (drain, unwatch, dereg, watch, reg)
 *   watch       WATCH + UNWATCH of 4 KiB, with and without SNAPSHOT (what
 *               the fingerprint adds to a miss)
 * Medians of ROUNDS; in the TCG guest only the ratios mean anything.
 *   bench-mrmon-recovery [rounds]     (needs an RDMA device: bench.sh)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "../verbs-test.h"
#include "mrmon_test.h"
#include "bench_util.h"

#define WINDOW (2ul << 20)
#define BATCH 32

#ifndef MRC_HAVE_VERBS
int main(void)
{
	VERBS_TEST_REQUIRE();
}
#else
static int watch_flags(struct mon *m, void *p, uint32_t flags, uint32_t *slot, uint64_t *exp)
{
	struct mrmon_range r = { .start = (uintptr_t)p, .len = PAGE, .flags = flags };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	int rc = mon_ioctl(m->fd, MRMON_IOC_WATCH, &b);

	*slot = r.slot;
	*exp = r.expected;
	return rc;
}

static int unwatch(struct mon *m, uint32_t slot, uint64_t exp)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .expected = exp };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };

	return mon_ioctl(m->fd, MRMON_IOC_UNWATCH, &b);
}

/* Drain the events and re-arm; returns the new word or 0. */
static uint64_t recover(struct mon *m, uint32_t slot, uint64_t exp)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .expected = exp };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };
	struct mrmon_event ev[8];

	while (read(m->fd, ev, sizeof(ev)) > 0)
		;
	return mon_ioctl(m->fd, MRMON_IOC_REVALIDATE, &b) ? 0 : e.expected;
}

static void bench_reg(struct ibv_pd *pd, char *p, int rounds, double *reg, double *rereg)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, p, PAGE, IBV_ACCESS_LOCAL_WRITE);

	for (int i = 0; i < rounds; i++) {
		double t0 = now_ns(), t1;

		ibv_dereg_mr(mr);
		t1 = now_ns();
		mr = ibv_reg_mr(pd, p, PAGE, IBV_ACCESS_LOCAL_WRITE);
		rereg[i] = now_ns() - t0;
		reg[i] = now_ns() - t1;
		CHECK(mr != NULL);
	}
	ibv_dereg_mr(mr);
}

/* Returns how many rounds could not be re-armed (must be 0). */
static int bench_recovery(struct mon *m, struct ibv_pd *pd, char *p, int rounds, double *rec)
{
	struct ibv_mr *mr;
	uint32_t slot;
	uint64_t exp;
	int lost = 0, n = 0;

	/* Watch, register, re-check: as a cache does. */
	CHECK_EQ(watch_flags(m, p, MRMON_RANGE_SNAPSHOT, &slot, &exp), 0);
	mr = ibv_reg_mr(pd, p, PAGE, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && mon_valid(m, slot, exp));
	for (int i = 0; n < rounds && i < 4 * rounds; i++) {
		double t0;
		uint64_t now;

		/* Alternate protections split and merge the VMA 1 MiB away. */
		mprotect(p + WINDOW / 2, PAGE, i % 2 ? PROT_READ | PROT_WRITE : PROT_READ);
		if (mon_valid(m, slot, exp))
			continue;	/* this change sent no CLEAR */
		t0 = now_ns();
		now = recover(m, slot, exp);
		rec[n++] = now_ns() - t0;
		lost += !now;
		if (now)
			exp = now;
	}
	CHECK_EQ(n, rounds);
	CHECK_EQ(unwatch(m, slot, exp), 0);
	ibv_dereg_mr(mr);
	return lost;
}

/* BATCH pinned watches, one page each; per round one split, one read, one
 * REVALIDATE batch; the time per watch.  Returns the watches not re-armed. */
static int bench_batched(struct mon *m, struct ibv_pd *pd, char *p, int rounds, double *rec)
{
	struct mrmon_unwatch_entry e[BATCH] = { { 0 } };
	struct mrmon_batch b = { .entries = (uintptr_t)e, .count = BATCH };
	struct mrmon_event ev[BATCH];
	struct ibv_mr *mr;
	int lost = 0, n = 0;

	for (int j = 0; j < BATCH; j++) {
		uint64_t exp;

		CHECK_EQ(watch_flags(m, p + j * PAGE, MRMON_RANGE_SNAPSHOT, &e[j].slot, &exp), 0);
		e[j].expected = exp;
	}
	mr = ibv_reg_mr(pd, p, BATCH * PAGE, IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr && mon_valid(m, e[0].slot, e[0].expected));
	for (int i = 0; n < rounds && i < 4 * rounds; i++) {
		double t0;

		mprotect(p + WINDOW / 2, PAGE, i % 2 ? PROT_READ | PROT_WRITE : PROT_READ);
		if (mon_valid(m, e[0].slot, e[0].expected))
			continue;
		t0 = now_ns();
		while (read(m->fd, ev, sizeof(ev)) > 0)
			;
		CHECK_EQ(mon_ioctl(m->fd, MRMON_IOC_REVALIDATE, &b), 0);
		rec[n++] = (now_ns() - t0) / BATCH;
		b.done = 0;
		for (int j = 0; j < BATCH; j++)
			lost += !e[j].expected;
	}
	CHECK_EQ(n, rounds);
	for (int j = 0; j < BATCH; j++)
		if (e[j].expected)
			CHECK_EQ(unwatch(m, e[j].slot, e[j].expected), 0);
	ibv_dereg_mr(mr);
	return lost;
}

static void bench_ioctl(struct mon *m, int rounds, double *t)
{
	for (int i = 0; i < rounds; i++) {
		struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
		double t0 = now_ns();

		mon_ioctl(m->fd, MRMON_IOC_HANDSHAKE, &hs);
		t[i] = now_ns() - t0;
	}
}

static struct mrcache *verbs_cache(struct ibv_pd *pd)
{
	struct mrcache_config cfg;
	struct mrcache *c = NULL;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.pd = pd;
	cfg.monitor = MRCACHE_MONITOR_KERNEL;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	return c;
}

static double timed_get(struct mrcache *c, char *p)
{
	struct mrcache_region *r;
	double t0 = now_ns(), t;

	CHECK_EQ(mrcache_get(c, p, PAGE, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	t = now_ns() - t0;
	mrcache_put(c, r);
	return t;
}

/* Each round splits the window's VMA, or replaces the cached page.
 * Returns the registrations the splits cost. */
static uint64_t bench_library(struct ibv_pd *pd, char *p, int rounds, double *split, double *real)
{
	struct mrcache *c = verbs_cache(pd);
	struct mrcache_stats s0, s1;

	if (!c)
		return ~0ull;
	timed_get(c, p);
	mrcache_stats_get(c, &s0);
	for (int i = 0; i < rounds; i++) {
		/* Split the whole-window VMA (CLEAR), measure, merge it back. */
		CHECK_EQ(mprotect(p + WINDOW / 2, PAGE, PROT_READ), 0);
		split[i] = timed_get(c, p);
		CHECK_EQ(mprotect(p + WINDOW / 2, PAGE, PROT_READ | PROT_WRITE), 0);
		timed_get(c, p);
	}
	mrcache_stats_get(c, &s1);
	for (int i = 0; i < rounds; i++) {
		CHECK_EQ(madvise(p, PAGE, MADV_DONTNEED), 0);
		p[0] = (char)i;
		real[i] = timed_get(c, p);
	}
	mrcache_destroy(c);
	return s1.registrations - s0.registrations;
}

static void bench_watch(struct mon *m, char *p, uint32_t flags, int rounds, double *t)
{
	for (int i = 0; i < rounds; i++) {
		double t0 = now_ns();
		uint32_t slot;
		uint64_t exp;

		CHECK_EQ(watch_flags(m, p, flags, &slot, &exp), 0);
		CHECK_EQ(unwatch(m, slot, exp), 0);
		t[i] = now_ns() - t0;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 201;
	double *reg = calloc(rounds, sizeof(double)), *rereg = calloc(rounds, sizeof(double));
	double *rec = calloc(rounds, sizeof(double)), *w0 = calloc(rounds, sizeof(double));
	double *w1 = calloc(rounds, sizeof(double)), *rb = calloc(rounds, sizeof(double));
	double *io = calloc(rounds, sizeof(double)), *ls = calloc(rounds, sizeof(double));
	double *lr = calloc(rounds, sizeof(double));
	uint64_t split_regs;
	struct verbs_test vt;
	struct mon m;
	char *raw, *p;
	int lost, lost_batched;

	if (rounds < 1 || rounds > 400 || !reg || !rereg || !rec || !w0 || !w1 || !rb || !io || !ls || !lr)
		return 2;
	verbs_test_open(&vt);
	CHECK_EQ(mon_open(&m, 2 * BATCH, 4 * BATCH), 0);
	raw = mmap(NULL, 2 * WINDOW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(raw != MAP_FAILED);
	p = (char *)(((uintptr_t)raw + WINDOW - 1) & ~(WINDOW - 1));
	memset(p, 1, WINDOW);

	bench_reg(vt.pd, p, rounds, reg, rereg);
	lost = bench_recovery(&m, vt.pd, p, rounds, rec);
	lost_batched = bench_batched(&m, vt.pd, p, rounds, rb);
	bench_ioctl(&m, rounds, io);
	split_regs = bench_library(vt.pd, p, rounds, ls, lr);
	bench_watch(&m, p, 0, rounds, w0);
	bench_watch(&m, p, MRMON_RANGE_SNAPSHOT, rounds, w1);
	printf("medians of %d, ns (TCG: compare ratios only)\n", rounds);
	printf("  ibv_reg_mr 4 KiB                    %9.0f\n", median(reg, rounds));
	printf("  ibv_dereg_mr + ibv_reg_mr 4 KiB     %9.0f\n", median(rereg, rounds));
	printf("  recovery (read events + REVALIDATE) %9.0f  = %.3f of reg, %.3f of dereg+reg; %d of %d not re-armed\n",
	       median(rec, rounds), median(rec, rounds) / median(reg, rounds),
	       median(rec, rounds) / median(rereg, rounds), lost, rounds);
	printf("  recovery, %d watches per split      %9.0f  = %.3f of reg, %.3f of dereg+reg per watch; %d not re-armed\n",
	       BATCH, median(rb, rounds), median(rb, rounds) / median(reg, rounds),
	       median(rb, rounds) / median(rereg, rounds), lost_batched);
	printf("  HANDSHAKE (any ioctl)               %9.0f\n", median(io, rounds));
	printf("  library: get after a split          %9.0f  = %.3f of a get after a real change; %llu registrations for %d splits\n",
	       median(ls, rounds), median(ls, rounds) / median(lr, rounds),
	       (unsigned long long)split_regs, rounds);
	printf("  library: get after DONTNEED+write   %9.0f  (re-registration)\n", median(lr, rounds));
	printf("  WATCH + UNWATCH 4 KiB               %9.0f\n", median(w0, rounds));
	printf("  WATCH(SNAPSHOT) + UNWATCH 4 KiB     %9.0f  (+%.0f for the fingerprint)\n",
	       median(w1, rounds), median(w1, rounds) - median(w0, rounds));
	CHECK_EQ(lost, 0);
	CHECK_EQ(lost_batched, 0);
	CHECK_EQ(split_regs, 0);
	mon_close(&m);
	verbs_test_close(&vt);
	return test_result();
}
#endif
