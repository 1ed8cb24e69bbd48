/* SPDX-License-Identifier: MIT */
/*
 * A region in use is never deregistered.  Invalidated while in use, it
 * leaves the lookup at once (later gets miss and register anew) and is
 * deregistered at its last put.  The invalidation callback reports it.
 */
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096

static int invalidations;
static uintptr_t inv_start, inv_end;

static void on_invalidate(void *arg, uintptr_t start, uintptr_t end, enum mrcache_cause cause)
{
	invalidations++;
	inv_start = start;
	inv_end = end;
	CHECK_EQ(cause, MRCACHE_CAUSE_MANUAL);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r1, *r2, *r3;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 16 * P, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.on_invalidate = on_invalidate;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);

	CHECK_EQ(mrcache_get(c, buf, 2 * P, 0, &r1), 0);
	CHECK_EQ(mrcache_get(c, buf, 2 * P, 0, &r2), 0);	/* two references */
	CHECK(r1 == r2);
	CHECK_EQ(mrcache_invalidate(c, buf + P, 1), 1);
	CHECK_EQ(invalidations, 1);
	CHECK(inv_start == (uintptr_t)buf && inv_end == (uintptr_t)buf + 2 * P);
	CHECK_EQ(tb.deregs, 0);			/* in use: still registered */
	CHECK(test_backend_covers(&tb, buf, 2 * P));

	/* Later gets miss and get a new registration. */
	CHECK_EQ(mrcache_get(c, buf, 2 * P, 0, &r3), 0);
	CHECK(mrcache_region_handle(r3) != mrcache_region_handle(r1));
	CHECK_EQ(tb.regs, 2);
	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	CHECK_EQ(st.misses, 2);
	CHECK_EQ(st.invalidations[MRCACHE_CAUSE_MANUAL], 1);

	CHECK_EQ(mrcache_put(c, r1), 0);
	CHECK_EQ(tb.deregs, 0);			/* one reference left */
	CHECK_EQ(mrcache_put(c, r2), 0);
	CHECK_EQ(tb.deregs, 1);			/* the last put deregistered */
	CHECK_EQ(mrcache_put(c, r2), -22);	/* not held any more */

	/* destroy refuses while r3 is held, then succeeds. */
	CHECK_EQ(mrcache_destroy(c), -16);
	CHECK_EQ(mrcache_put(c, r3), 0);
	CHECK_EQ(mrcache_flush(c), 1);
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
