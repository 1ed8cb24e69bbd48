/* SPDX-License-Identifier: MIT */
/*
 * Overlapping requests: merged into one registration covering both (with
 * both accesses); the old region leaves the index at once but, while in
 * use, stays registered until its put.  With MRCACHE_FLAG_NO_MERGE the
 * overlapping request is handed out uncached.
 */
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *a, *b, *x;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	CHECK_EQ(mrcache_get(c, buf, 4 * P, MRCACHE_ACCESS_LOCAL_WRITE, &a), 0);
	/* [2P, 8P) overlaps [0, 4P): merged into [0, 8P), a stays held. */
	CHECK_EQ(mrcache_get(c, buf + 2 * P, 6 * P, MRCACHE_ACCESS_REMOTE_READ, &b), 0);
	CHECK(mrcache_region_addr(b) == buf);
	CHECK_EQ(mrcache_region_length(b), 8 * P);
	CHECK_EQ(tb.live, 2);		/* a is in use: not deregistered */
	CHECK_EQ(mrcache_put(c, a), 0);
	CHECK_EQ(tb.live, 1);		/* a's last put deregistered it */
	/* Everything in [0, 8P) now hits b, with either access. */
	CHECK_EQ(mrcache_get(c, buf, P, MRCACHE_ACCESS_LOCAL_WRITE | MRCACHE_ACCESS_REMOTE_READ, &x), 0);
	CHECK(x == b);
	CHECK_EQ(mrcache_put(c, x), 0);
	CHECK_EQ(mrcache_put(c, b), 0);

	/* A request spanning two cached regions merges all three. */
	CHECK_EQ(mrcache_get(c, buf + 20 * P, P, 0, &a), 0);
	CHECK_EQ(mrcache_put(c, a), 0);
	CHECK_EQ(mrcache_get(c, buf + 7 * P, 14 * P, 0, &x), 0);
	CHECK(mrcache_region_addr(x) == buf);
	CHECK_EQ(mrcache_region_length(x), 21 * P);
	CHECK_EQ(mrcache_put(c, x), 0);
	CHECK_EQ(tb.live, 1);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.merges, 3);
	CHECK_EQ(st.regions, 1);
	CHECK_EQ(st.bytes, 21 * P);
	CHECK_EQ(mrcache_destroy(c), 0);

	/* No merge: the overlapping request is served uncached. */
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags |= MRCACHE_FLAG_NO_MERGE;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	CHECK_EQ(mrcache_get(c, buf, 4 * P, 0, &a), 0);
	CHECK_EQ(mrcache_get(c, buf + 2 * P, 6 * P, 0, &b), 0);
	CHECK(mrcache_region_addr(b) == buf + 2 * P);
	CHECK_EQ(tb.live, 2);
	CHECK_EQ(mrcache_put(c, b), 0);
	CHECK_EQ(tb.live, 1);		/* uncached: deregistered at put */
	CHECK_EQ(mrcache_put(c, a), 0);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.uncached, 1);
	CHECK_EQ(st.regions, 1);
	CHECK_EQ(mrcache_destroy(c), 0);

	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
