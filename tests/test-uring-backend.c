/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend on its own: slots are handed out and reused, a full
 * table and the kernel's limits give the documented errors, the key works
 * with READ_FIXED, and a registration outliving its mapping is caught by
 * the oracle (the hazard the cache exists to prevent: negative control).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "backend/backend.h"
#include "oracle.h"
#include "testutil.h"

#define BUF_LEN (64 * 1024)

static void *map_fresh(void *at)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0);
	void *p = mmap(at, BUF_LEN, PROT_READ | PROT_WRITE, flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void bad_configs(struct oracle *o)
{
	struct mrcache_config cfg;
	struct mrc_backend *be;

	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = MRCACHE_BACKEND_URING;
	CHECK_EQ(mrc_backend_open(&cfg, &be), -EINVAL);	/* no ring */
	cfg.ring = &o->ring;
	cfg.uring_slots = 16385;
	CHECK_EQ(mrc_backend_open(&cfg, &be), -EINVAL);	/* over 16384 */
	cfg.backend = (enum mrcache_backend_kind)42;
	CHECK_EQ(mrc_backend_open(&cfg, &be), -EINVAL);
	CHECK_EQ(mrc_backend_open(NULL, &be), -EINVAL);
}

static void resource_errors(void)
{
	static const int yes[] = { ENOMEM, ENOSPC, EAGAIN, EMFILE, ENFILE };
	static const int no[] = { 0, EINVAL, E2BIG, EFAULT, EPERM, EIO, ENOTSUP };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(mrc_backend_resource_error(-yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!mrc_backend_resource_error(-no[i]));
}

int main(void)
{
	struct mrc_reg ra, rb, rc, rbig;
	struct mrcache_config cfg;
	struct mrc_backend *be, *be2;
	struct oracle o;
	void *a, *b, *c;
	int ret;

	ret = oracle_init(&o, 1, BUF_LEN);
	if (ret)
		SKIP("io_uring unusable here: %s", strerror(-ret));
	bad_configs(&o);
	resource_errors();

	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &o.ring;
	cfg.uring_slots = 2;
	CHECK_EQ(mrc_backend_open(&cfg, &be), 0);
	CHECK_EQ(mrc_backend_open(&cfg, &be2), -EBUSY);	/* table taken */

	a = map_fresh(NULL);
	b = map_fresh(NULL);
	c = map_fresh(NULL);
	CHECK(a && b && c);
	CHECK_EQ(be->ops->reg(be, a, BUF_LEN, 0, 0, &ra, NULL), 0);
	CHECK_EQ(be->ops->reg(be, b, BUF_LEN, 0, 0, &rb, NULL), 0);
	CHECK(ra.key < 2 && rb.key < 2 && ra.key != rb.key);

	/* Full table: a resource error, so the cache would evict and retry. */
	ret = be->ops->reg(be, c, BUF_LEN, 0, 0, &rc, NULL);
	CHECK_EQ(ret, -ENOSPC);
	CHECK(mrc_backend_resource_error(ret));

	/* Over the kernel's 1 GiB per buffer: a clear, non-resource error. */
	ret = be->ops->reg(be, c, (1ul << 30) + 4096, 0, 0, &rbig, NULL);
	CHECK_EQ(ret, -E2BIG);
	CHECK(!mrc_backend_resource_error(ret));

	/* The key is a buffer index READ_FIXED accepts; data lands in a. */
	CHECK_EQ(oracle_check_index(&o, 0, (int)ra.key, a, BUF_LEN), ORACLE_FRESH);
	CHECK_EQ(oracle_check_index(&o, 0, (int)rb.key, (char *)b + 4096, 8192),
		 ORACLE_FRESH);

	/* Negative control: a's registration outlives its mapping; I/O through
	 * it lands in the old pages, and the oracle must say so. */
	CHECK_EQ(munmap(a, BUF_LEN), 0);
	CHECK(map_fresh(a) == a);
	CHECK_EQ(oracle_check_index(&o, 0, (int)ra.key, a, BUF_LEN), ORACLE_STALE);

	/* dereg empties the slot (I/O through it now fails) and frees it. */
	CHECK_EQ(be->ops->dereg(be, &ra), 0);
	CHECK(oracle_check_index(&o, 0, (int)ra.key, a, BUF_LEN) < 0);
	CHECK_EQ(be->ops->reg(be, c, BUF_LEN, 0, 0, &rc, NULL), 0);
	CHECK_EQ(rc.key, ra.key);
	CHECK_EQ(oracle_check_index(&o, 0, (int)rc.key, c, BUF_LEN), ORACLE_FRESH);

	CHECK_EQ(be->ops->dereg(be, &rb), 0);
	/* Unpinnable memory: the kernel's error, not a resource shortage. */
	CHECK_EQ(munmap(b, BUF_LEN), 0);
	ret = be->ops->reg(be, b, BUF_LEN, 0, 0, &rb, NULL);
	CHECK_EQ(ret, -EFAULT);
	CHECK(!mrc_backend_resource_error(ret));
	CHECK(map_fresh(b) == b);
	CHECK_EQ(be->ops->dereg(be, &rc), 0);
	be->ops->close(be);
	/* close gave the table back: the ring takes a new one. */
	CHECK_EQ(mrc_backend_open(&cfg, &be), 0);
	be->ops->close(be);

	munmap(a, BUF_LEN);
	munmap(b, BUF_LEN);
	munmap(c, BUF_LEN);
	oracle_fini(&o);
	return test_result();
}
