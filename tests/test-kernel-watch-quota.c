/* SPDX-License-Identifier: MIT */
/*
 * The kernel monitor at mrmon's max_watches_per_mm: WATCH then fails with
 * EDQUOT, which the cache must treat like any resource limit (evict an
 * unused region, try again), not as the get's failure.  With the parameter
 * lowered to QUOTA, QUOTA * 2 distinct regions are got and put one after
 * the other: every get succeeds and evictions make the room.  Control:
 * holding QUOTA regions, one more get fails (nothing can be evicted).  The
 * parameter is restored.  Needs root and the module (the guest); skips
 * elsewhere.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define QUOTA 8
#define PARAM "/sys/module/mrmon/parameters/max_watches_per_mm"

static int param_write(const char *v)
{
	FILE *f = fopen(PARAM, "w");

	if (!f)
		return -errno;
	fputs(v, f);
	return fclose(f) ? -errno : 0;
}

int main(void)
{
	struct mrcache_region *held[QUOTA + 1];
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;
	char old[32] = "", *buf;
	FILE *f = fopen(PARAM, "r");
	int rc;

	if (!f || !fgets(old, sizeof(old), f))
		SKIP("%s unreadable: no mrmon here", PARAM);
	fclose(f);
	if (param_write("8\n"))
		SKIP("cannot write %s (not root?)", PARAM);
	buf = mmap(NULL, 4 * QUOTA * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_KERNEL);
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		param_write(old);
		SKIP("the kernel monitor does not start here (%s)", strerror(-rc));
	}
	for (int i = 0; i < 2 * QUOTA; i++) {
		struct mrcache_region *r;
		/* Every other page: distinct regions, never merged. */
		int got = mrcache_get(c, buf + 2 * i * 4096, 4096, 0, &r);

		CHECK_EQ(got, 0);
		if (!got)
			mrcache_put(c, r);
	}
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	printf("%d gets at a quota of %d watches: %llu evictions\n", 2 * QUOTA, QUOTA,
	       (unsigned long long)st.evictions);
	CHECK(st.evictions >= QUOTA);
	CHECK(mrcache_flush(c) >= 0);
	for (int i = 0; i < QUOTA; i++)
		CHECK_EQ(mrcache_get(c, buf + 2 * i * 4096, 4096, 0, &held[i]), 0);
	rc = mrcache_get(c, buf + 2 * QUOTA * 4096, 4096, 0, &held[QUOTA]);
	printf("holding %d: one more get gives %s\n", QUOTA, strerror(-rc));
	CHECK_EQ(rc, -EDQUOT);
	for (int i = 0; i < QUOTA; i++)
		mrcache_put(c, held[i]);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(param_write(old), 0);
	return test_result();
}
