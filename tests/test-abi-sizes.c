/* SPDX-License-Identifier: MIT */
/*
 * The structs travel with their size (docs/api.md), and the library
 * follows copy_struct_from_user()'s rules:
 *  - a config of 0.1.0's size (the smallest) creates a cache; a smaller
 *    one is -EINVAL;
 *  - a larger config (a newer program's) is accepted when the bytes this
 *    library does not know are 0, and is -E2BIG otherwise (the negative
 *    control: one garbage byte at the very end);
 *  - config_init zeroes exactly the size it is given;
 *  - stats and the config in effect are filled to the caller's size and
 *    no further, and a larger struct's unknown tail comes back 0.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testutil.h"

#define SLACK 64
#define CANARY 0xa5

/* A config followed by room a newer header might have used. */
struct bigger_config {
	struct mrcache_config cfg;
	unsigned char tail[SLACK];
};

static int all(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return 0;
	return 1;
}

static int create_sized(struct test_backend *tb, size_t size, int garbage_at)
{
	struct bigger_config b;
	struct mrcache *c;
	int rc;

	memset(&b, 0, sizeof(b));
	test_backend_config(tb, &b.cfg, MRCACHE_MONITOR_NONE);
	if (garbage_at >= 0)
		((unsigned char *)&b)[garbage_at] = 1;
	rc = mrcache_create_sized(&b.cfg, size, &c);
	if (rc == 0)
		CHECK_EQ(mrcache_destroy(c), 0);
	return rc;
}

static void check_config_sizes(struct test_backend *tb)
{
	size_t base = sizeof(struct mrcache_config);
	size_t ver0 = offsetof(struct mrcache_config, cb_arg) + sizeof(void *);

	CHECK_EQ(create_sized(tb, ver0, -1), 0);
	CHECK_EQ(create_sized(tb, base, -1), 0);
	CHECK_EQ(create_sized(tb, ver0 - 8, -1), -EINVAL);
	CHECK_EQ(create_sized(tb, 0, -1), -EINVAL);
	CHECK_EQ(create_sized(tb, base + SLACK, -1), 0);
	CHECK_EQ(create_sized(tb, base + SLACK, (int)(base + SLACK - 1)), -E2BIG);
	CHECK_EQ(create_sized(tb, base + 1, (int)base), -E2BIG);
	/* A byte past the size given is not the library's to read. */
	CHECK_EQ(create_sized(tb, base, (int)base), 0);
	CHECK_EQ(mrcache_create_sized(NULL, base, NULL), -EINVAL);
}

static void check_config_init(void)
{
	struct bigger_config b;
	size_t base = sizeof(b.cfg);

	memset(&b, CANARY, sizeof(b));
	CHECK_EQ(mrcache_config_init_sized(&b.cfg, base), 0);
	CHECK(all(b.tail, SLACK, CANARY));
	CHECK_EQ(b.cfg.backend, MRCACHE_BACKEND_CALLBACKS);
	CHECK(b.cfg.ops == NULL && b.cfg.max_bytes == 0);
	CHECK_EQ(mrcache_config_init_sized(&b.cfg, base + SLACK), 0);
	CHECK(all(b.tail, SLACK, 0));
	CHECK_EQ(mrcache_config_init_sized(&b.cfg, 8), -EINVAL);
	CHECK_EQ(mrcache_config_init_sized(NULL, base), -EINVAL);
}

static void check_stats_sizes(struct mrcache *c)
{
	struct {
		struct mrcache_stats s;
		unsigned char tail[SLACK];
	} b;
	size_t few = offsetof(struct mrcache_stats, misses);

	memset(&b, CANARY, sizeof(b));
	CHECK_EQ(mrcache_stats_get_sized(c, &b.s, few), (int)few);
	CHECK_EQ(b.s.hits, 1);
	CHECK(all((unsigned char *)&b.s + few, sizeof(b) - few, CANARY));
	memset(&b, CANARY, sizeof(b));
	CHECK_EQ(mrcache_stats_get_sized(c, &b.s, sizeof(b)), (int)sizeof(b.s));
	CHECK_EQ(b.s.misses, 1);
	CHECK_EQ(b.s.monitor, MRCACHE_MONITOR_NONE);
	CHECK(all(b.tail, SLACK, 0));
	CHECK(all((unsigned char *)&b.s.invalidations[MRCACHE_CAUSE_COUNT_],
		  (MRCACHE_CAUSE_MAX - MRCACHE_CAUSE_COUNT_) * sizeof(uint64_t), 0));
	CHECK_EQ(mrcache_stats_get_sized(c, NULL, sizeof(b.s)), -EINVAL);
}

static void check_config_get(struct mrcache *c)
{
	struct bigger_config b;

	memset(&b, CANARY, sizeof(b));
	CHECK_EQ(mrcache_config_get_sized(c, &b.cfg, sizeof(b)), (int)sizeof(b.cfg));
	CHECK(all(b.tail, SLACK, 0));
	CHECK_EQ(b.cfg.monitor, MRCACHE_MONITOR_NONE);
	CHECK_EQ(b.cfg.max_regions, 7);
	CHECK_EQ(b.cfg.flags, MRCACHE_FLAG_NO_ENV);
	memset(&b, CANARY, sizeof(b));
	CHECK_EQ(mrcache_config_get_sized(c, &b.cfg, 4), 4);
	CHECK_EQ(b.cfg.backend, MRCACHE_BACKEND_CALLBACKS);
	CHECK(all((unsigned char *)&b + 4, sizeof(b) - 4, CANARY));
	CHECK_EQ(mrcache_config_get(NULL, &b.cfg), -EINVAL);
}

int main(void)
{
	static char buf[2 * 4096] __attribute__((aligned(4096)));
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_region *r;
	struct mrcache *c;

	test_backend_init(&tb, 0);
	check_config_sizes(&tb);
	check_config_init();

	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_regions = 7;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	CHECK_EQ(mrcache_get(c, buf, 4096, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_get(c, buf, 4096, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	check_stats_sizes(c);
	check_config_get(c);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
