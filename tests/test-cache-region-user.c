/* SPDX-License-Identifier: MIT */
/*
 * A region carries a user pointer, and on_region_invalidate and
 * on_region_evict name the region: its key, handle and user pointer.
 *  - the pointer a get_ex passes is the region's when that get registers
 *    it; a later hit keeps the first one's;
 *  - reg_ex (callbacks backend) can set it, and sees the get's first;
 *  - the region callbacks get the region while it is still registered
 *    (its key is the one the get saw; the backend has not deregistered it)
 *    and run after on_invalidate / on_evict;
 *  - attr sizes: smaller than the first struct is -EINVAL, a larger one
 *    with a non-zero unknown byte -E2BIG, NULL attr is a plain get.
 * Control: a plain mrcache_get() region has a NULL user pointer.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

struct seen {
	int order;		/* 1: on_invalidate ran, then 2: on_region_invalidate */
	unsigned inv, evict;
	uint64_t key;
	void *user, *handle;
	int registered;		/* the backend still had it */
	struct test_backend *tb;
};

static void on_inv(void *arg, uintptr_t s, uintptr_t e, enum mrcache_cause cause)
{
	((struct seen *)arg)->order = 1;
}

static void on_region_inv(void *arg, const struct mrcache_region *r, enum mrcache_cause cause)
{
	struct seen *s = arg;

	s->order = s->order == 1 ? 2 : -1;
	s->inv++;
	s->key = mrcache_region_key(r);
	s->user = mrcache_region_user(r);
	s->handle = mrcache_region_handle(r);
	s->registered = test_backend_covers(s->tb, mrcache_region_addr(r), mrcache_region_length(r));
}

static void on_region_evict(void *arg, const struct mrcache_region *r)
{
	struct seen *s = arg;

	s->evict++;
	s->user = mrcache_region_user(r);
	s->key = mrcache_region_key(r);
}

/* reg_ex: wraps the test backend, and replaces a user pointer of 0x1. */
static int reg_ex(void *arg, void *addr, size_t len, unsigned access, uint64_t flags,
		  void **handle, uint64_t *key, void **user)
{
	static int mine;

	if (*user == (void *)1)
		*user = &mine;
	return test_backend_ops.reg(arg, addr, len, access, handle, key);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r, *r2;
	struct seen seen = { .tb = &tb };
	int a, b;
	char *buf = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mrcache_get_attr attr = { .user = &a };
	struct { struct mrcache_get_attr attr; char tail[8]; } big;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.on_invalidate = on_inv;
	cfg.on_region_invalidate = on_region_inv;
	cfg.on_region_evict = on_region_evict;
	cfg.cb_arg = &seen;
	cfg.max_regions = 2;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	/* Set at the get that registers; a hit keeps it. */
	CHECK_EQ(mrcache_get_ex(c, buf, 4096, 0, &attr, &r), 0);
	CHECK(mrcache_region_user(r) == &a);
	attr.user = &b;
	CHECK_EQ(mrcache_get_ex(c, buf, 4096, 0, &attr, &r2), 0);
	CHECK(r2 == r && mrcache_region_user(r2) == &a);
	CHECK_EQ(mrcache_put(c, r2), 0);

	/* The invalidation names the region, still registered. */
	CHECK_EQ(mrcache_invalidate(c, buf, 4096), 1);
	CHECK_EQ(seen.inv, 1);
	CHECK_EQ(seen.order, 2);
	CHECK(seen.user == &a);
	CHECK_EQ(seen.key, mrcache_region_key(r));
	CHECK(seen.handle == mrcache_region_handle(r));
	CHECK(seen.registered);
	CHECK_EQ(mrcache_put(c, r), 0);

	/* Control: a plain get has no user pointer. */
	CHECK_EQ(mrcache_get(c, buf + 8192, 4096, 0, &r), 0);
	CHECK(mrcache_region_user(r) == NULL);
	CHECK_EQ(mrcache_put(c, r), 0);

	/* Eviction names the region too: fill max_regions = 2, add a third. */
	attr.user = &b;
	CHECK_EQ(mrcache_get_ex(c, buf + 16384, 4096, 0, &attr, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	attr.user = NULL;
	CHECK_EQ(mrcache_get_ex(c, buf + 65536, 4096, 0, &attr, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(seen.evict, 1);
	CHECK(seen.user == NULL);	/* the LRU one: buf + 8192's plain get */

	/* Sizes. */
	CHECK_EQ(mrcache_get_ex_sized(c, buf, 4096, 0, &attr, sizeof(attr) - 1, &r), -EINVAL);
	memset(&big, 0, sizeof(big));
	big.attr.user = &a;
	CHECK_EQ(mrcache_get_ex_sized(c, buf, 4096, 0, &big.attr, sizeof(big), &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	big.tail[7] = 1;
	CHECK_EQ(mrcache_get_ex_sized(c, buf, 4096, 0, &big.attr, sizeof(big), &r), -E2BIG);
	CHECK_EQ(mrcache_get_ex(c, buf, 4096, 0, NULL, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);

	/* The backend's reg_ex sees the get's pointer and may replace it. */
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.reg_ex = reg_ex;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	attr.user = (void *)1;
	CHECK_EQ(mrcache_get_ex(c, buf, 4096, 0, &attr, &r), 0);
	CHECK(mrcache_region_user(r) != NULL && mrcache_region_user(r) != (void *)1);
	CHECK_EQ(mrcache_put(c, r), 0);
	attr.user = &a;
	CHECK_EQ(mrcache_get_ex(c, buf + 8192, 4096, 0, &attr, &r), 0);
	CHECK(mrcache_region_user(r) == &a);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
