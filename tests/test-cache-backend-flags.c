/* SPDX-License-Identifier: MIT */
/*
 * Backend flags (mrcache_get_ex's attr.backend_flags) reach the backend's
 * registration as they are and are part of the cache key:
 *  - two gets differing in a keyed flag never share a registration, on
 *    the same range (the second is served uncached) or apart;
 *  - gets with the same flags share one (a hit);
 *  - gets differing only in a hint (cfg.backend_flags_shared) share one;
 *  - a flag the backend does not take is -EINVAL, as is an access bit
 *    beyond the four in mrcache_get(); the uring backend takes none;
 *  - the 256th distinct keyed set of one cache is -ENOSPC.
 * Control: the same range and flags twice is one registration.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <liburing.h>
#include "testbackend.h"
#include "testutil.h"

#define KEYED_A	0x100ull
#define KEYED_B	0x200ull
#define HINT	0x400ull
#define MANY	0x1fe0000ull		/* 255 more keyed bits' worth of sets */

static uint64_t last_flags;

static int reg_ex(void *arg, void *addr, size_t len, unsigned access, uint64_t flags,
		  void **handle, uint64_t *key, void **user)
{
	last_flags = flags;
	return test_backend_ops.reg(arg, addr, len, access, handle, key);
}

static struct mrcache_region *get(struct mrcache *c, void *p, uint64_t flags, int *rc)
{
	struct mrcache_get_attr attr = { .backend_flags = flags };
	struct mrcache_region *r = NULL;

	*rc = mrcache_get_ex(c, p, 4096, MRCACHE_ACCESS_LOCAL_WRITE, &attr, &r);
	return r;
}

static void check_uring(void *buf)
{
	struct io_uring ring;
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	if (io_uring_queue_init(8, &ring, 0)) {
		printf("no io_uring: uring part skipped\n");
		return;
	}
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &ring;
	cfg.uring_slots = 4;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	if (mrcache_create(&cfg, &c) == 0) {
		CHECK(get(c, buf, 1, &rc) == NULL);
		CHECK_EQ(rc, -EINVAL);
		CHECK_EQ(mrcache_destroy(c), 0);
	}
	io_uring_queue_exit(&ring);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r0, *ra, *ra2, *rb, *rh, *r;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int rc, i;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.reg_ex = reg_ex;
	cfg.backend_flags = KEYED_A | KEYED_B | HINT | MANY;
	cfg.backend_flags_shared = HINT;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	/* Same range: no flags, then A: two registrations, A's flags seen. */
	r0 = get(c, buf, 0, &rc);
	CHECK_EQ(rc, 0);
	ra = get(c, buf, KEYED_A, &rc);
	CHECK_EQ(rc, 0);
	CHECK_EQ(last_flags, KEYED_A);
	CHECK(ra != r0 && mrcache_region_key(ra) != mrcache_region_key(r0));
	CHECK_EQ(tb.regs, 2);
	CHECK_EQ(mrcache_put(c, ra), 0);
	CHECK_EQ(mrcache_put(c, r0), 0);

	/* Apart: A, A again (a hit), B (its own), A|HINT (shares A's). */
	ra = get(c, buf + 65536, KEYED_A, &rc);
	ra2 = get(c, buf + 65536, KEYED_A, &rc);
	CHECK(ra == ra2);
	rb = get(c, buf + 65536, KEYED_B, &rc);
	CHECK(rb && rb != ra);
	CHECK_EQ(last_flags, KEYED_B);
	rh = get(c, buf + 65536, KEYED_A | HINT, &rc);
	CHECK(rh == ra);
	CHECK_EQ(tb.regs, 4);
	for (r = ra; r; r = NULL)
		CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_put(c, ra2), 0);
	CHECK_EQ(mrcache_put(c, rb), 0);
	CHECK_EQ(mrcache_put(c, rh), 0);

	/* A hint alone is no key: it shares the flagless registration. */
	rh = get(c, buf + 131072, HINT, &rc);
	CHECK_EQ(last_flags, HINT);
	r0 = get(c, buf + 131072, 0, &rc);
	CHECK(r0 == rh);
	CHECK_EQ(mrcache_put(c, r0), 0);
	CHECK_EQ(mrcache_put(c, rh), 0);

	/* Unknown bits. */
	CHECK(get(c, buf, 1, &rc) == NULL);
	CHECK_EQ(rc, -EINVAL);
	CHECK_EQ(mrcache_get(c, buf, 4096, 0x10, &r), -EINVAL);

	/* Classes: A and B took two; 253 more fit, the next does not. */
	for (i = 1; i <= 254; i++) {
		r = get(c, buf + 262144, (uint64_t)i << 17, &rc);
		if (i <= 253) {
			CHECK_EQ(rc, 0);
			if (r)
				CHECK_EQ(mrcache_put(c, r), 0);
		} else {
			CHECK_EQ(rc, -ENOSPC);
		}
	}
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);

	/* Flags without reg_ex, or hints that are not flags: -EINVAL. */
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.backend_flags = KEYED_A;
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);
	cfg.reg_ex = reg_ex;
	cfg.backend_flags_shared = HINT;
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);

	check_uring(buf);
	return test_result();
}
