/* SPDX-License-Identifier: MIT */
/*
 * A cache's name (cfg.name):
 *  - prefixes its log lines ("NAME: ...") and its statistics
 *    ("mrcache stats of NAME"), and only its own: an unnamed cache's
 *    lines carry no name (the control);
 *  - MRCACHE_<NAME>_<VAR> overrides MRCACHE_<VAR> for that cache only:
 *    with MRCACHE_MAX_REGIONS=5 and MRCACHE_RDMA_MAX_REGIONS=7 the cache
 *    "rdma" has 7, the cache "disk" 5; MRCACHE_RDMA_MONITOR=none applies
 *    to rdma; a bad per-name value fails that cache's create, naming the
 *    variable; a per-name variable is not reported as unknown;
 *  - config_get returns the name; names that are not 1-32 letters and
 *    digits are -EINVAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

static int make(struct test_backend *tb, const char *name, struct mrcache **c)
{
	struct mrcache_config cfg;

	test_backend_config(tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	cfg.name = name;
	return mrcache_create(&cfg, c);
}

/* Two caches under the environment: prints their limits and monitors,
 * then puts of garbage log one error each; MRCACHE_STATS prints. */
static int two(void *arg)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *rdma, *disk;
	int x;

	test_backend_init(&tb, 0);
	if (make(&tb, "rdma", &rdma))
		return 2;
	if (make(&tb, NULL, &disk))
		return 3;
	mrcache_config_get(rdma, &cfg);
	printf("rdma max_regions %zu monitor %s name %s\n", cfg.max_regions,
	       mrcache_monitor_name(cfg.monitor), cfg.name ? cfg.name : "(null)");
	mrcache_config_get(disk, &cfg);
	printf("unnamed max_regions %zu monitor %s name %s\n", cfg.max_regions,
	       mrcache_monitor_name(cfg.monitor), cfg.name ? cfg.name : "(null)");
	fflush(stdout);
	mrcache_put(rdma, (struct mrcache_region *)&x);
	mrcache_put(disk, (struct mrcache_region *)&x);
	mrcache_stats_print(rdma, stderr);
	return mrcache_destroy(rdma) || mrcache_destroy(disk);
}

int main(void)
{
	static const char *const env[] = {
		"MRCACHE_MAX_REGIONS=5", "MRCACHE_RDMA_MAX_REGIONS=7",
		"MRCACHE_MONITOR=auto", "MRCACHE_RDMA_MONITOR=NONE", NULL,
	};
	static const char *const bad[] = { "MRCACHE_RDMA_MAX_BYTES=lots", NULL };
	static struct test_child res;
	struct test_backend tb;
	struct mrcache *c;
	char long_name[40];

	CHECK_EQ(test_child_run(env, -1, two, NULL, &res), 0);
	printf("%s%s", res.out, res.err);
	CHECK(strstr(res.out, "rdma max_regions 7 monitor none name rdma"));
	CHECK(strstr(res.out, "unnamed max_regions 5 monitor"));
	CHECK(strstr(res.out, "name (null)"));
	CHECK(strstr(res.err, "mrcache: rdma: mrcache_put of a region this cache did not hand out"));
	CHECK(strstr(res.err, "mrcache: mrcache_put of a region this cache did not hand out"));
	CHECK(strstr(res.err, "mrcache stats of rdma (monitor none)"));
	CHECK(!strstr(res.err, "unknown"));

	CHECK_EQ(test_child_run(bad, -1, two, NULL, &res), 2);
	CHECK(strstr(res.err, "MRCACHE_RDMA_MAX_BYTES=\"lots\""));

	test_env_clear();
	test_backend_init(&tb, 0);
	CHECK_EQ(make(&tb, "", &c), -EINVAL);
	CHECK_EQ(make(&tb, "rd-ma", &c), -EINVAL);
	CHECK_EQ(make(&tb, "rd_ma", &c), -EINVAL);
	memset(long_name, 'a', 33);
	long_name[33] = 0;
	CHECK_EQ(make(&tb, long_name, &c), -EINVAL);
	long_name[32] = 0;
	CHECK_EQ(make(&tb, long_name, &c), 0);
	if (!test_failures)
		CHECK_EQ(mrcache_destroy(c), 0);
	return test_result();
}
