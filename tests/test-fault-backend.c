/* SPDX-License-Identifier: MIT */
/*
 * Backend failures at every call site: for each n, the n-th registration
 * of a scenario fails (with a resource error and with a hard one).  Every
 * get returns 0 or that error, never a region that is not registered; the
 * cache stays consistent (a later get works) and nothing leaks.  A monitor
 * that cannot start makes mrcache_create fail cleanly.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096

static int scenario(char *buf, int fail_at, int err)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *held[8];
	int nheld = 0, regs_seen = 0;

	test_backend_init(&tb, 6);	/* a small "table": forces evictions */
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_regions = 4;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	for (int i = 0; i < 24; i++) {
		struct mrcache_region *r;
		int rc;

		if (regs_seen++ == fail_at)
			test_backend_fail(&tb, err, 1);
		rc = mrcache_get(c, buf + (size_t)(i % 9) * 3 * P, (i % 3 + 1) * P, 0, &r);
		CHECK(rc == 0 || rc == err || rc == -ENOSPC);
		if (rc)
			continue;
		CHECK(test_backend_covers(&tb, mrcache_region_addr(r), mrcache_region_length(r)));
		if (i % 5 == 0 && nheld < 8)
			held[nheld++] = r;
		else
			CHECK_EQ(mrcache_put(c, r), 0);
	}
	for (int i = 0; i < nheld; i++)
		CHECK_EQ(mrcache_put(c, held[i]), 0);
	test_backend_fail(&tb, 0, 0);	/* disarm if no registration took it */
	{
		struct mrcache_region *r;

		CHECK_EQ(mrcache_get(c, buf + 60 * P, P, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
	}
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return 0;
}

int main(void)
{
	char *buf = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const int errs[] = { -EFAULT, -ENOMEM, -EAGAIN, -EINVAL };
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	for (unsigned e = 0; e < sizeof(errs) / sizeof(errs[0]); e++)
		for (int n = 0; n < 24; n++)
			scenario(buf, n, errs[e]);

	/* A monitor that cannot start: a clear error, nothing created. */
	if (access("/dev/mrmon", F_OK) != 0) {
		test_backend_init(&tb, 0);
		test_backend_config(&tb, &cfg, MRCACHE_MONITOR_KERNEL);
		c = NULL;
		CHECK(mrcache_create(&cfg, &c) < 0);
		CHECK(c == NULL);
		CHECK_EQ(test_backend_fini(&tb), 0);
	}
	return test_result();
}
