/* SPDX-License-Identifier: MIT */
/*
 * At the count or byte limit, unused regions are evicted in LRU order
 * (the eviction callback reports it), exact to an epoch: the puts between
 * two misses count as equally recent (lru.h).  When every region is in use,
 * the new registration is handed out uncached, counted, and deregistered
 * at its put.
 */
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096
#define N 8

static uintptr_t evicted[64];
static int nevicted;

static void on_evict(void *arg, uintptr_t start, uintptr_t end)
{
	evicted[nevicted++] = start;
}

static void use(struct mrcache *c, char *addr)
{
	struct mrcache_region *r;

	CHECK_EQ(mrcache_get(c, addr, P, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *held[N], *extra;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_regions = N;
	cfg.on_evict = on_evict;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	/* Pages 0, 2, 4, ... so no two regions merge. */
	for (int i = 0; i < N; i++)
		use(c, buf + 2 * i * P);
	/* Touch 5, 1, 7, 3 with no miss between: LRU is now 0, 2, 4, 6, then
	 * those four in any order. */
	use(c, buf + 10 * P);
	use(c, buf + 2 * P);
	use(c, buf + 14 * P);
	use(c, buf + 6 * P);
	for (int i = 0; i < N; i++)
		use(c, buf + (32 + 2 * i) * P);
	{
		static const int order[N] = { 0, 2, 4, 6, 5, 1, 7, 3 };

		unsigned tied = 0;

		CHECK_EQ(nevicted, N);
		for (int i = 0; i < N / 2 && i < nevicted; i++)
			CHECK(evicted[i] == (uintptr_t)(buf + 2 * order[i] * P));
		for (int i = N / 2; i < nevicted; i++)
			for (int j = N / 2; j < N; j++)
				if (evicted[i] == (uintptr_t)(buf + 2 * order[j] * P))
					tied |= 1u << j;
		CHECK_EQ(tied, 0xf0);
	}
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.evictions, N);
	CHECK_EQ(st.regions, N);
	CHECK_EQ(tb.live, N);

	/* Every region in use: the next one is uncached. */
	for (int i = 0; i < N; i++)
		CHECK_EQ(mrcache_get(c, buf + (32 + 2 * i) * P, P, 0, &held[i]), 0);
	CHECK_EQ(mrcache_get(c, buf + 60 * P, P, 0, &extra), 0);
	CHECK_EQ(tb.live, N + 1);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.uncached, 1);
	CHECK_EQ(st.regions, N);
	CHECK_EQ(mrcache_put(c, extra), 0);
	CHECK_EQ(tb.live, N);
	for (int i = 0; i < N; i++)
		CHECK_EQ(mrcache_put(c, held[i]), 0);
	CHECK_EQ(mrcache_destroy(c), 0);

	/* The byte limit: 4 pages; a 3-page region evicts two 1-page ones. */
	nevicted = 0;
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_bytes = 4 * P;
	cfg.on_evict = on_evict;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	use(c, buf);
	use(c, buf + 2 * P);
	use(c, buf + 4 * P);
	CHECK_EQ(mrcache_get(c, buf + 10 * P, 3 * P, 0, &extra), 0);
	CHECK_EQ(mrcache_put(c, extra), 0);
	CHECK_EQ(nevicted, 2);
	CHECK(evicted[0] == (uintptr_t)buf && evicted[1] == (uintptr_t)(buf + 2 * P));
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.bytes, 4 * P);
	/* Larger than the whole budget: uncached. */
	CHECK_EQ(mrcache_get(c, buf + 20 * P, 5 * P, 0, &extra), 0);
	CHECK_EQ(mrcache_put(c, extra), 0);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.uncached, 1);
	CHECK_EQ(mrcache_destroy(c), 0);

	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
