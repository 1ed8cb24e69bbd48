/* SPDX-License-Identifier: MIT */
/*
 * A request inside a cached registration with enough access is a hit and
 * calls no backend; a wider access or an uncovered byte is a miss.
 */
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r, *r2;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	CHECK_EQ(mrcache_get(c, buf + 100, 8000, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	CHECK_EQ(tb.regs, 1);
	/* Registrations are page granular. */
	CHECK(mrcache_region_addr(r) == buf);
	CHECK_EQ(mrcache_region_length(r), 8192);
	CHECK(test_backend_covers(&tb, buf, 8192));
	CHECK_EQ(mrcache_put(c, r), 0);

	/* Same pages, same access: hit, no backend call. */
	CHECK_EQ(mrcache_get(c, buf, 8192, MRCACHE_ACCESS_LOCAL_WRITE, &r2), 0);
	CHECK(r2 == r);
	CHECK_EQ(mrcache_put(c, r2), 0);
	/* Inside, less access: sub-range hit. */
	CHECK_EQ(mrcache_get(c, buf + 4096, 10, 0, &r2), 0);
	CHECK(r2 == r);
	CHECK_EQ(mrcache_put(c, r2), 0);
	CHECK_EQ(tb.regs, 1);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.hits, 1);
	CHECK_EQ(st.subrange_hits, 1);
	CHECK_EQ(st.misses, 1);

	/* More access than registered: a miss, re-registered with both. */
	CHECK_EQ(mrcache_get(c, buf, 4096, MRCACHE_ACCESS_REMOTE_READ, &r2), 0);
	CHECK_EQ(tb.regs, 2);
	CHECK_EQ(mrcache_put(c, r2), 0);
	CHECK_EQ(mrcache_get(c, buf, 8192, MRCACHE_ACCESS_LOCAL_WRITE | MRCACHE_ACCESS_REMOTE_READ, &r2), 0);
	CHECK_EQ(tb.regs, 2);
	CHECK_EQ(mrcache_put(c, r2), 0);

	/* One byte beyond the region: a miss. */
	CHECK_EQ(mrcache_get(c, buf + 8191, 2, 0, &r2), 0);
	CHECK_EQ(tb.regs, 3);
	CHECK_EQ(mrcache_put(c, r2), 0);

	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.misses, 3);
	CHECK_EQ(st.registrations, tb.regs);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
