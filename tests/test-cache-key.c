/* SPDX-License-Identifier: MIT */
/*
 * The key a hit hands out is the key of the region's current
 * registration: after a re-registration of the same range, after an
 * eviction, and in a region slot reused for another range (a copy of
 * the key kept anywhere but the registration itself must follow it).  The test
 * backend gives every registration a new key, so a stale copy shows.
 * Control: two registrations of one range get different keys.
 */
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define PAGE 4096

/* The key of the registration the last miss made. */
static uint64_t last_key(struct test_backend *tb)
{
	return tb->next_key - 1;
}

/* get (a miss), then a hit of the same range: both hand out the key of
 * the registration the miss made.  Returns the region, released. */
static struct mrcache_region *get_fresh(struct mrcache *c, struct test_backend *tb,
					const char *p, uint64_t *key)
{
	struct mrcache_region *r, *again;
	uint64_t regs = tb->regs;

	CHECK_EQ(mrcache_get(c, p, PAGE, 0, &r), 0);
	CHECK_EQ(tb->regs, regs + 1);
	*key = last_key(tb);
	CHECK_EQ(mrcache_region_key(r), *key);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_get(c, p, PAGE, 0, &again), 0);
	CHECK(again == r);
	CHECK_EQ(tb->regs, regs + 1);
	CHECK_EQ(mrcache_region_key(again), *key);
	CHECK_EQ(mrcache_put(c, again), 0);
	return r;
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *ra, *ra2, *rb;
	uint64_t ka, ka2, kb, ka3;
	char *buf;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_regions = 1;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED);

	ra = get_fresh(c, &tb, buf, &ka);

	/* Re-registration of the same range, in the same slot. */
	CHECK_EQ(mrcache_invalidate(c, buf, PAGE), 1);
	ra2 = get_fresh(c, &tb, buf, &ka2);
	CHECK(ka2 != ka);	/* control: the keys tell registrations apart */
	CHECK(ra2 == ra);

	/* Another range evicts it (max_regions 1) and reuses its slot. */
	rb = get_fresh(c, &tb, buf + PAGE, &kb);
	CHECK(kb != ka2);
	CHECK(rb == ra);

	/* The first range again, after its eviction. */
	get_fresh(c, &tb, buf, &ka3);
	CHECK(ka3 != kb);

	mrcache_destroy(c);
	CHECK_EQ(test_backend_fini(&tb), 0);
	munmap(buf, 2 * PAGE);
	return test_result();
}
