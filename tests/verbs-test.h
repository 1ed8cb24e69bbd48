/* SPDX-License-Identifier: MIT */
/*
 * verbs-test.h - shared by tests/test-verbs-*.c: open the first RDMA
 * device and a protection domain on it, or skip (exit 77) saying why.
 * There is none on the build host; the guest suite (tests/guest/rdma/)
 * creates a Soft-RoCE device and runs these tests there.
 */
#ifndef MRC_VERBS_TEST_H
#define MRC_VERBS_TEST_H

#include "mrcache.h"

#ifndef MRC_HAVE_VERBS
#include "testutil.h"
#define VERBS_TEST_REQUIRE() SKIP("libmrcache was built without libibverbs")
#else
#include <infiniband/verbs.h>
#include "testutil.h"

struct verbs_test {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
};

static inline void verbs_test_open(struct verbs_test *vt)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		if (list)
			ibv_free_device_list(list);
		SKIP("no RDMA device (the guest suite creates a Soft-RoCE one)");
	}
	vt->ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!vt->ctx)
		SKIP("cannot open the first RDMA device");
	vt->pd = ibv_alloc_pd(vt->ctx);
	if (!vt->pd)
		SKIP("cannot allocate a protection domain");
}

static inline void verbs_test_close(struct verbs_test *vt)
{
	ibv_dealloc_pd(vt->pd);
	ibv_close_device(vt->ctx);
}
#endif
#endif
