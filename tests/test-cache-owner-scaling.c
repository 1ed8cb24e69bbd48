/* SPDX-License-Identifier: MIT */
/*
 * "Is this region ours?" (mrc_region_is_ours: every mrcache_put, every
 * monitor event that names a region) costs the same with one region slab
 * as with hundreds: it once walked the list of slabs.  Timed for the
 * worst cases of that walk, a region of the oldest slab and a region of
 * another cache, as the best of several batches; the bound (5x) is far
 * below what a walk of SLABS slabs costs and far above the noise.  The
 * answers are checked too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include "cache/cache.h"
#include "testutil.h"

#define PAGE 4096
#define SLABS 512
#define BATCH 100000
#define BATCHES 7
#define MAX_RATIO 5.0

static int reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
	       uint64_t *key)
{
	*handle = addr;
	*key = 0;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	return 0;
}

static const struct mrcache_backend_ops ops = { .reg = reg, .dereg = dereg };

static struct mrcache *cache_new(void)
{
	struct mrcache_config cfg;
	struct mrcache *c = NULL;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags |= MRCACHE_FLAG_NO_ENV;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	return c;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best ns per call over BATCHES batches; *answer: the last result. */
static double time_is_ours(const struct mrcache *c, const struct mrcache_region *r,
			   int *answer)
{
	double best = 1e30;

	for (int b = 0; b < BATCHES; b++) {
		double t0 = now_ns(), dt;
		int n = 0;

		for (int i = 0; i < BATCH; i++)
			n += mrc_region_is_ours(c, r);
		dt = (now_ns() - t0) / BATCH;
		if (dt < best)
			best = dt;
		*answer = n == BATCH ? 1 : n == 0 ? 0 : -1;
	}
	return best;
}

/* Get regions until the cache has `slabs` slabs' worth; they stay held. */
static int fill(struct mrcache *c, char *area, size_t *have, size_t slabs,
		struct mrcache_region **held)
{
	for (; *have < slabs * REGION_SLAB_REGIONS; (*have)++)
		if (mrcache_get(c, area + 2 * PAGE * *have, PAGE, 0, &held[*have]))
			return -1;
	return 0;
}

int main(void)
{
	size_t n = (size_t)SLABS * REGION_SLAB_REGIONS, have = 0;
	size_t area_len = 2 * PAGE * (n + 1);
	struct mrcache_region **held = calloc(n + 1, sizeof(*held)), *other;
	char *area = mmap(NULL, area_len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct mrcache *c = cache_new(), *b = cache_new();
	double own1, foreign1, ownN, foreignN;
	int ans;

	if (!held || area == MAP_FAILED || !c || !b)
		SKIP("cannot set up %zu regions here", n);
	CHECK_EQ(mrcache_get(b, area + 2 * PAGE * n, PAGE, 0, &other), 0);
	CHECK_EQ(fill(c, area, &have, 1, held), 0);
	own1 = time_is_ours(c, held[0], &ans);
	CHECK_EQ(ans, 1);
	foreign1 = time_is_ours(c, other, &ans);
	CHECK_EQ(ans, 0);
	CHECK_EQ(fill(c, area, &have, SLABS, held), 0);
	ownN = time_is_ours(c, held[0], &ans);
	CHECK_EQ(ans, 1);
	foreignN = time_is_ours(c, other, &ans);
	CHECK_EQ(ans, 0);
	CHECK(mrc_region_is_ours(c, held[have - 1]));
	CHECK(mrc_region_is_ours(b, other));
	CHECK(!mrc_region_is_ours(b, held[have - 1]));
	printf("ns per check, 1 slab -> %d slabs: own region %.1f -> %.1f, "
	       "another cache's %.1f -> %.1f\n", SLABS, own1, ownN, foreign1, foreignN);
	CHECK(ownN < MAX_RATIO * own1);
	CHECK(foreignN < MAX_RATIO * foreign1);

	for (size_t i = 0; i < have; i++)
		CHECK_EQ(mrcache_put(c, held[i]), 0);
	CHECK_EQ(mrcache_put(b, other), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(mrcache_destroy(b), 0);
	munmap(area, area_len);
	free(held);
	return test_result();
}
