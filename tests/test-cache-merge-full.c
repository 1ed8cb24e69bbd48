/* SPDX-License-Identifier: MIT */
/*
 * A merge on a full backend: the regions a request merges give their
 * registrations back before the merged one registers.  With room for one
 * registration (like a full io_uring table), a cached [0, 4P) and a get of
 * [2P, 8P): the merged [0, 8P) must register at the first try, no failed
 * registration counted and nothing evicted.  (Reclaim defers
 * deregistrations to the end of the lock section; a merge must not wait
 * for it.)  Negative control: a second, unrelated region on the same full
 * backend does count a failed registration and an eviction.
 */
#include <errno.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096

/* The cache's stats after a step, printed under label. */
static void stats_after(struct mrcache *c, const char *label, struct mrcache_stats *st)
{
	CHECK_EQ(mrcache_stats_get(c, st), 0);
	printf("%-8s %llu failed registration(s), %llu eviction(s)\n", label,
	       (unsigned long long)st->registration_failures, (unsigned long long)st->evictions);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(buf != MAP_FAILED);
	test_backend_init(&tb, 1);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	CHECK_EQ(mrcache_get(c, buf, 4 * P, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_get(c, buf + 2 * P, 6 * P, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	CHECK(mrcache_region_addr(r) == buf);
	CHECK_EQ(mrcache_put(c, r), 0);
	stats_after(c, "merge:", &st);
	CHECK_EQ(st.registration_failures, 0);
	CHECK_EQ(st.evictions, 0);
	CHECK_EQ(st.merges, 1);
	CHECK_EQ(tb.failed_regs, 0);

	/* The control: no merge, so the cached region must be evicted. */
	CHECK_EQ(mrcache_get(c, buf + 32 * P, P, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	stats_after(c, "control:", &st);
	CHECK_EQ(st.registration_failures, 1);
	CHECK_EQ(st.evictions, 1);

	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	CHECK_EQ(tb.bad_deregs, 0);
	munmap(buf, 64 * P);
	return test_result();
}
