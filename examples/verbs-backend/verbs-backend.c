/* SPDX-License-Identifier: MIT */
/*
 * verbs-backend: ibv_reg_mr through mrcache on the first RDMA device.  The
 * second get of a buffer returns the same memory region (same lkey) with
 * no ibv_reg_mr call.
 * Exit 0, 1 on failure, 77 when this machine has no RDMA device.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int use_device(struct ibv_pd *pd)
{
	struct mrcache_region *a, *b;
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *cache;
	size_t len = 1u << 20;
	void *buf = aligned_alloc(4096, len);
	int rc;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.pd = pd;
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "verbs-backend: mrcache_create: %s\n", strerror(-rc));
		return 1;
	}
	rc = buf ? mrcache_get(cache, buf, len, MRCACHE_ACCESS_LOCAL_WRITE, &a) : -ENOMEM;
	if (!rc) {
		rc = mrcache_get(cache, buf, len, MRCACHE_ACCESS_LOCAL_WRITE, &b);
		if (!rc) {
			printf("lkey %#llx, rkey %#x; again: lkey %#llx\n",
			       (unsigned long long)mrcache_region_key(a), mrcache_region_rkey(a),
			       (unsigned long long)mrcache_region_key(b));
			mrcache_put(cache, b);
		}
		mrcache_put(cache, a);
	}
	if (rc)
		fprintf(stderr, "verbs-backend: mrcache_get: %s\n", strerror(-rc));
	mrcache_stats_get(cache, &st);
	mrcache_destroy(cache);
	free(buf);
	return !rc && st.registrations == 1 && st.hits == 1 ? 0 : 1;
}

int main(void)
{
	struct ibv_device **devs = ibv_get_device_list(NULL);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int rc;

	if (!devs || !devs[0]) {
		fprintf(stderr, "verbs-backend: no RDMA device here (rdma link add rxe0 type rxe netdev eth0 makes one)\n");
		return 77;
	}
	ctx = ibv_open_device(devs[0]);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	if (!pd) {
		fprintf(stderr, "verbs-backend: %s: cannot open it\n", ibv_get_device_name(devs[0]));
		return 1;
	}
	printf("device %s\n", ibv_get_device_name(devs[0]));
	rc = use_device(pd);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	return rc;
}
