/* SPDX-License-Identifier: MIT */
/*
 * bench-mrmon: the kernel monitor's figures beside the userfaultfd monitor,
 * in one run (docs/mrmon.md).  Both monitors are driven through the
 * library: a cache per monitor (callbacks backend, no-op registration) and
 * its monitor's own watch/unwatch/drain.  Prints medians of batches; in
 * the TCG guest only ratios within one run mean anything.
 *   bench-mrmon [rounds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cache/cache.h"
#include "mrmon_test.h"
#include "bench_util.h"

#define BATCH 200
#define EVENTS 4096

static int noop_reg(void *arg, void *addr, size_t len, unsigned access, void **h, uint64_t *key)
{
	*h = addr;
	*key = 0;
	return 0;
}

static int noop_dereg(void *arg, void *h)
{
	return 0;
}

static const struct mrcache_backend_ops noop_ops = { noop_reg, noop_dereg };

static struct mrcache *cache_with(enum mrcache_monitor_kind kind)
{
	struct mrcache_config cfg;
	struct mrcache *c;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &noop_ops;
	cfg.monitor = kind;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	return mrcache_create(&cfg, &c) ? NULL : c;
}

/* ns per watch+unwatch of one 4 KiB page. */
static double watch_cost(struct mrcache *c, char *page, int rounds)
{
	struct mrc_monitor *mon = c->monitor;
	double v[rounds];

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (int i = 0; i < BATCH; i++) {
			struct mrc_watch w = { 0 };

			mon->ops->watch(mon, (uintptr_t)page, (uintptr_t)page + PAGE, 1, &w);
			mon->ops->unwatch(mon, &w);
		}
		v[r] = (now_ns() - t0) / BATCH;
	}
	return median(v, rounds);
}

/* ns per munmap of a touched 4 KiB page, cached (so watched) by c when
 * `watched`; c may be NULL (no monitor in the process at all). */
static double munmap_cost(struct mrcache *c, int watched, int rounds)
{
	double v[rounds];

	for (int r = 0; r < rounds; r++) {
		double t = 0;

		for (int i = 0; i < BATCH / 4; i++) {
			char *p = mon_map_anon(PAGE);
			struct mrcache_region *reg = NULL;
			double t0;

			if (c && watched && !mrcache_get(c, p, PAGE, 0, &reg))
				mrcache_put(c, reg);
			t0 = now_ns();
			munmap(p, PAGE);
			t += now_ns() - t0;
			if (c)
				mrcache_progress(c);
		}
		v[r] = t / (BATCH / 4);
	}
	return median(v, rounds);
}

/* ns per hit: mrcache_get + mrcache_put of a cached page. */
static double hit_cost(struct mrcache *c, char *page, int rounds)
{
	struct mrcache_region *reg;
	double v[rounds];

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns();

		for (int i = 0; i < BATCH * 10; i++) {
			if (mrcache_get(c, page, PAGE, 0, &reg))
				return -1;
			mrcache_put(c, reg);
		}
		v[r] = (now_ns() - t0) / (BATCH * 10);
	}
	return median(v, rounds);
}

/* Invalidations reported per second: EVENTS watched pages unmapped by one
 * munmap, then drained (the uffd monitor reports from its handler). */
static double events_per_s(struct mrcache *c, int rounds)
{
	struct mrc_monitor *mon = c->monitor;
	static struct mrc_watch w[EVENTS];
	double v[rounds];

	for (int r = 0; r < rounds; r++) {
		char *p = mon_map_anon(EVENTS * PAGE);
		double t0;

		for (int i = 0; i < EVENTS; i++)
			mon->ops->watch(mon, (uintptr_t)p + i * PAGE,
					(uintptr_t)p + (i + 1) * PAGE, i + 1, &w[i]);
		t0 = now_ns();
		munmap(p, EVENTS * PAGE);
		mrc_cache_lock(c);
		if (mon->ops->drain)
			mon->ops->drain(mon);
		mrc_cache_unlock(c);
		v[r] = EVENTS / ((now_ns() - t0) / 1e9);
		for (int i = 0; i < EVENTS; i++)
			mon->ops->unwatch(mon, &w[i]);
	}
	return median(v, rounds);
}

/* The hit check alone: one acquire load and a compare. */
static double check_cost(const uint64_t *word, uint64_t expected)
{
	volatile int sink = 0;
	double t0 = now_ns();

	for (int i = 0; i < 10000000; i++)
		sink += __atomic_load_n(word, __ATOMIC_ACQUIRE) == expected;
	return (now_ns() - t0) / 1e7 + 0 * sink;
}

int main(int argc, char **argv)
{
	static const enum mrcache_monitor_kind kinds[] = { MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_UFFD };
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	char *page = mon_map_anon(PAGE);

	printf("%-8s %14s %16s %16s %14s %14s %12s\n", "monitor", "watch+unwatch",
	       "munmap unwatched", "munmap watched", "hit get+put", "events/s", "word check");
	printf("%-8s %14s %13.0f ns %16s %14s %14s %12s\n", "(none)", "-",
	       munmap_cost(NULL, 0, rounds), "-", "-", "-", "-");
	for (unsigned k = 0; k < 2; k++) {
		struct mrcache *c = cache_with(kinds[k]);
		struct mrc_watch w = { 0 };

		if (!c) {
			printf("%-8s cannot start here\n", mrcache_monitor_name(kinds[k]));
			continue;
		}
		c->monitor->ops->watch(c->monitor, (uintptr_t)page, (uintptr_t)page + PAGE, 1, &w);
		printf("%-8s %11.0f ns %13.0f ns %13.0f ns %11.0f ns %14.0f %9.2f ns\n",
		       mrcache_monitor_name(kinds[k]), watch_cost(c, page, rounds),
		       munmap_cost(c, 0, rounds), munmap_cost(c, 1, rounds), hit_cost(c, page, rounds),
		       events_per_s(c, rounds), check_cost(w.word ? w.word : &w.local, w.expected));
		c->monitor->ops->unwatch(c->monitor, &w);
		mrcache_flush(c);
		mrcache_destroy(c);
	}
	return 0;
}
