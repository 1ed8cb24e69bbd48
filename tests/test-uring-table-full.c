/* SPDX-License-Identifier: MIT */
/*
 * A cache on a two-slot io_uring table: a third registration finds the
 * table full, the cache evicts the least recently used unused region and
 * retries, and the new region's buffer index works with READ_FIXED.  With
 * both slots in use nothing can be evicted, and the caller sees -ENOSPC
 * (the control: eviction, not luck, made room before).  A buffer over
 * io_uring's 1 GiB limit is refused with -E2BIG.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "oracle.h"
#include "testutil.h"

#define LEN (64 * 1024)
#define RW MRCACHE_ACCESS_LOCAL_WRITE

static struct mrcache_stats stats(struct mrcache *cache)
{
	struct mrcache_stats st;

	memset(&st, 0, sizeof(st));
	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	return st;
}

static void get_put(struct mrcache *cache, void *addr)
{
	struct mrcache_region *r;

	CHECK_EQ(mrcache_get(cache, addr, LEN, RW, &r), 0);
	CHECK_EQ(mrcache_put(cache, r), 0);
}

int main(void)
{
	struct mrcache_region *ra, *rb, *rc;
	struct mrcache_config cfg;
	struct mrcache *cache;
	struct mrcache_stats st;
	struct oracle o;
	char *area, *a, *b, *c;
	void *huge;
	int ret;

	ret = oracle_init(&o, 1, LEN);
	if (ret)
		SKIP("io_uring unusable here: %s", strerror(-ret));
	oracle_config(&o, &cfg, MRCACHE_MONITOR_NONE, 2);
	CHECK_EQ(mrcache_create(&cfg, &cache), 0);

	/* Three buffers with gaps between them: never merged. */
	area = mmap(NULL, 6 * LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(area != MAP_FAILED);
	a = area;
	b = area + 2 * LEN;
	c = area + 4 * LEN;

	get_put(cache, a);
	get_put(cache, b);
	get_put(cache, c);	/* full table: evict a, retry */
	st = stats(cache);
	CHECK_EQ(st.evictions, 1);
	CHECK_EQ(st.regions, 2);
	CHECK_EQ(st.registrations, 3);

	/* The retried registration is real: its index reaches c's pages. */
	CHECK_EQ(mrcache_get(cache, c, LEN, RW, &rc), 0);
	CHECK_EQ(stats(cache).hits, 1);
	CHECK_EQ(oracle_check(&o, 0, rc, c, LEN), ORACLE_FRESH);
	CHECK_EQ(mrcache_put(cache, rc), 0);

	/* b was least recently used: evicted for a; c stays. */
	get_put(cache, a);
	st = stats(cache);
	CHECK_EQ(st.evictions, 2);
	get_put(cache, c);
	CHECK_EQ(stats(cache).hits, st.hits + 1);

	/* Both slots held: nothing to evict, the error reaches the caller. */
	CHECK_EQ(mrcache_get(cache, a, LEN, RW, &ra), 0);
	CHECK_EQ(mrcache_get(cache, c, LEN, RW, &rc), 0);
	CHECK_EQ(mrcache_get(cache, b, LEN, RW, &rb), -ENOSPC);
	CHECK_EQ(mrcache_put(cache, ra), 0);
	CHECK_EQ(mrcache_get(cache, b, LEN, RW, &rb), 0);
	CHECK_EQ(oracle_check(&o, 0, rb, b, LEN), ORACLE_FRESH);
	CHECK_EQ(mrcache_put(cache, rb), 0);
	CHECK_EQ(mrcache_put(cache, rc), 0);

	/* Over 1 GiB: refused clearly, not retried as a resource shortage. */
	huge = mmap(NULL, (1ul << 30) + LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(huge != MAP_FAILED);
	st = stats(cache);
	CHECK_EQ(mrcache_get(cache, huge, (1ul << 30) + LEN, RW, &ra), -E2BIG);
	CHECK_EQ(stats(cache).evictions, st.evictions);
	munmap(huge, (1ul << 30) + LEN);

	CHECK_EQ(mrcache_destroy(cache), 0);
	munmap(area, 6 * LEN);
	oracle_fini(&o);
	return test_result();
}
