/* SPDX-License-Identifier: MIT */
/*
 * A backend failure caused by resources evicts unused regions and retries;
 * the caller sees the error only when nothing more can be freed.  Other
 * errors are returned at once and leave the cache unchanged.
 */
#include <errno.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r, *held[4];
	struct mrcache_stats st;
	char *buf = mmap(NULL, 64 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	/* A backend that holds at most 4 registrations (like a full table). */
	test_backend_init(&tb, 4);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(mrcache_get(c, buf + 2 * i * P, P, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
	}
	/* The fifth fails with -ENOSPC, the cache evicts one and retries. */
	CHECK_EQ(mrcache_get(c, buf + 20 * P, P, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.evictions, 1);
	CHECK_EQ(st.registration_failures, 1);
	CHECK_EQ(tb.live, 4);

	/* Injected -ENOMEM and -EAGAIN are resource errors too. */
	test_backend_fail(&tb, -ENOMEM, 1);
	CHECK_EQ(mrcache_get(c, buf + 30 * P, P, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	test_backend_fail(&tb, -EAGAIN, 1);
	CHECK_EQ(mrcache_get(c, buf + 32 * P, P, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);

	/* Everything in use: nothing to free, the error reaches the caller. */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(mrcache_get(c, buf + (40 + 2 * i) * P, P, 0, &held[i]), 0);
	CHECK_EQ(mrcache_get(c, buf + 50 * P, P, 0, &r), -ENOSPC);
	CHECK_EQ(tb.live, 4);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(mrcache_put(c, held[i]), 0);

	/* A non-resource error evicts nothing. */
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	{
		uint64_t evictions = st.evictions;

		test_backend_fail(&tb, -EFAULT, 1);
		CHECK_EQ(mrcache_get(c, buf + 52 * P, P, 0, &r), -EFAULT);
		CHECK_EQ(mrcache_stats_get(c, &st), 0);
		CHECK_EQ(st.evictions, evictions);
		CHECK_EQ(st.regions, 4);
	}
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
