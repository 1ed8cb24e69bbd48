/* SPDX-License-Identifier: MIT */
/*
 * The verbs backend without a device: a config without a protection
 * domain is refused with -EINVAL (by the cache's config check and by the
 * backend itself), and a library built without libibverbs refuses any
 * verbs cache with -ENOTSUP.  Control: the same config with the callbacks
 * backend creates a cache, so the refusals come from the verbs checks.
 */
#include <errno.h>
#include "backend/backend.h"
#include "testbackend.h"
#include "testutil.h"

int main(void)
{
	struct mrcache_config cfg;
	struct mrcache *cache = NULL;
	struct mrc_backend *be = NULL;
	struct test_backend tb;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	CHECK_EQ(mrcache_create(&cfg, &cache), -EINVAL);
	CHECK(cache == NULL);
#ifdef MRC_HAVE_VERBS
	CHECK_EQ(mrc_backend_open(&cfg, &be), -EINVAL);
#else
	CHECK_EQ(mrc_backend_open(&cfg, &be), -ENOTSUP);
	/* Any PD: the backend never looks at it when it is not built. */
	cfg.pd = (struct ibv_pd *)&cfg;
	CHECK_EQ(mrcache_create(&cfg, &cache), -ENOTSUP);
	CHECK(cache == NULL);
	cfg.pd = NULL;
#endif
	CHECK(be == NULL);

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &cache), 0);
	if (cache)
		CHECK_EQ(mrcache_destroy(cache), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
