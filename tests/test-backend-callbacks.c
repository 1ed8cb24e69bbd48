/* SPDX-License-Identifier: MIT */
/*
 * The callbacks backend passes the range, access, handle and key through
 * unchanged, passes errors through (so resource errors stay resource
 * errors), rejects incomplete ops, and never lets a callback's positive
 * return pass for success.
 */
#include <errno.h>
#include <string.h>
#include "backend/backend.h"
#include "testbackend.h"
#include "testutil.h"

static int positive_reg(void *arg, void *addr, size_t len, unsigned access,
			void **handle, uint64_t *key)
{
	return 1;
}

static int positive_dereg(void *arg, void *handle)
{
	return 3;
}

static const struct mrcache_backend_ops positive_ops = {
	.reg = positive_reg,
	.dereg = positive_dereg,
};

int main(void)
{
	static const struct mrcache_backend_ops half = { .reg = positive_reg };
	struct mrcache_config cfg;
	struct test_backend tb;
	struct mrc_backend *be;
	struct mrc_reg r1, r2;
	char buf[8192];

	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	CHECK_EQ(mrc_backend_open(&cfg, &be), -EINVAL);	/* no ops */
	cfg.ops = &half;
	CHECK_EQ(mrc_backend_open(&cfg, &be), -EINVAL);	/* no dereg */

	test_backend_init(&tb, 1);
	cfg.ops = &test_backend_ops;
	cfg.ops_arg = &tb;
	CHECK_EQ(mrc_backend_open(&cfg, &be), 0);
	CHECK_EQ(be->ops->reg(be, buf, 4096, MRCACHE_ACCESS_LOCAL_WRITE, 0, &r1, NULL), 0);
	CHECK(test_backend_covers(&tb, buf, 4096));
	CHECK(!test_backend_covers(&tb, buf + 4096, 1));
	CHECK(r1.handle != NULL && r1.key == 1);

	/* The callback's own errors come back as they are. */
	CHECK_EQ(be->ops->reg(be, buf + 4096, 4096, 0, 0, &r2, NULL), -ENOSPC);
	test_backend_fail(&tb, -EAGAIN, 1);
	CHECK_EQ(be->ops->dereg(be, &r1), 0);
	CHECK_EQ(be->ops->reg(be, buf, 4096, 0, 0, &r2, NULL), -EAGAIN);
	CHECK_EQ(be->ops->reg(be, buf, 4096, 0, 0, &r2, NULL), 0);
	CHECK_EQ(r2.key, 2);
	CHECK_EQ(be->ops->dereg(be, &r2), 0);
	CHECK_EQ(be->ops->dereg(be, &r2), -EINVAL);	/* caught, not a crash */
	CHECK_EQ(tb.regs, 2);
	CHECK_EQ(tb.deregs, 2);
	CHECK_EQ(tb.failed_regs, 2);
	CHECK_EQ(tb.bad_deregs, 1);
	be->ops->close(be);
	CHECK_EQ(test_backend_fini(&tb), 0);

	/* A positive return is a broken callback: an error, never success. */
	cfg.ops = &positive_ops;
	CHECK_EQ(mrc_backend_open(&cfg, &be), 0);
	CHECK_EQ(be->ops->reg(be, buf, 4096, 0, 0, &r1, NULL), -EPROTO);
	CHECK(!mrc_backend_resource_error(-EPROTO));
	CHECK_EQ(be->ops->dereg(be, &r1), -EPROTO);
	be->ops->close(be);
	return test_result();
}
