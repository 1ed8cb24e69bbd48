/* SPDX-License-Identifier: MIT */
/*
 * A rescan (the hooks monitor's event ring overflowed) kills exactly the
 * regions whose memory changed and keeps the rest: 2,000 cached one-page
 * regions, two of every three unmapped one by one (1,333 events, far more
 * than the ring's 256), a few of those still held by the caller.  After
 * mrcache_progress() every unmapped region is invalidated (the held ones
 * deregister at their put), every mapped one still hits, and each
 * unmapped page, mapped again, registers anew.  The rescan walks the LRU
 * heap by position while it kills: a kill that moved entries would make
 * it skip regions.  Negative control: under `none` nothing is invalidated
 * and the remapped pages hit their stale registrations.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mrcache.h"
#include "testutil.h"

#define N	2000
#define HELD	8	/* unmapped regions the caller still holds */

static long regs, deregs;

static int reg(void *arg, void *addr, size_t len, unsigned access, void **h, uint64_t *key)
{
	*h = addr;
	*key = (uint64_t)++regs;
	return 0;
}

static int dereg(void *arg, void *h)
{
	deregs++;
	return 0;
}

static const struct mrcache_backend_ops ops = { .reg = reg, .dereg = dereg };

static int unmapped(int i)
{
	return i % 3 != 0;
}

static uint64_t invalidations(struct mrcache *c)
{
	struct mrcache_stats st;
	uint64_t sum = 0;

	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	for (int i = 0; i < MRCACHE_CAUSE_MAX; i++)
		sum += st.invalidations[i];
	return sum;
}

/* Returns how many of the remapped pages registered again; *kept_hits
 * counts the mapped regions that hit. */
static int run(enum mrcache_monitor_kind m, long *kept_hits, uint64_t *killed)
{
	size_t pg = (size_t)getpagesize();
	char *base = mmap(NULL, 2 * N * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mrcache_region *r, *held[HELD];
	struct mrcache_config cfg;
	struct mrcache *c;
	long before, nheld = 0, expect_deregs = 0;
	int v;

	CHECK(base != MAP_FAILED);
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.monitor = m;
	cfg.flags |= MRCACHE_FLAG_NO_ENV;
	v = mrcache_create(&cfg, &c);
	if (v)
		return v;
	regs = deregs = 0;
	for (int i = 0; i < N; i++) {
		CHECK_EQ(mrcache_get(c, base + 2 * i * pg, pg, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
		if (unmapped(i) && nheld < HELD)
			held[nheld++] = r;
		else
			mrcache_put(c, r);
	}
	CHECK_EQ(regs, N);
	for (int i = 0; i < N; i++)
		if (unmapped(i)) {
			CHECK_EQ(munmap(base + 2 * i * pg, pg), 0);
			expect_deregs++;
		}
	/* The checks below can fail: nothing is killed before the drain. */
	CHECK_EQ(invalidations(c), 0);
	CHECK(mrcache_progress(c) >= 0);
	*killed = invalidations(c);
	if (m != MRCACHE_MONITOR_NONE)
		CHECK_EQ(deregs, expect_deregs - HELD);
	for (int i = 0; i < nheld; i++)
		mrcache_put(c, held[i]);
	if (m != MRCACHE_MONITOR_NONE)
		CHECK_EQ(deregs, expect_deregs);

	before = regs;
	for (int i = 0; i < N; i += 3) {
		CHECK_EQ(mrcache_get(c, base + 2 * i * pg, pg, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
		mrcache_put(c, r);
	}
	*kept_hits = N / 3 + 1 - (regs - before);
	before = regs;
	for (int i = 0; i < N; i++)
		if (unmapped(i)) {
			CHECK(mmap(base + 2 * i * pg, pg, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED);
			CHECK_EQ(mrcache_get(c, base + 2 * i * pg, pg, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
			mrcache_put(c, r);
		}
	v = (int)(regs - before);
	CHECK_EQ(mrcache_destroy(c), 0);
	munmap(base, 2 * N * pg);
	return v;
}

int main(void)
{
	const long kept = N / 3 + 1, gone = N - kept;
	uint64_t killed;
	long hits;
	int fresh;

	fresh = run(MRCACHE_MONITOR_NONE, &hits, &killed);
	printf("none:  %llu invalidated, %ld of %ld kept hit, %d of %ld remapped registered (negative control)\n",
	       (unsigned long long)killed, hits, kept, fresh, gone);
	CHECK(killed == 0 && fresh == 0);
	fresh = run(MRCACHE_MONITOR_HOOKS, &hits, &killed);
	if (fresh == -ENOTSUP)
		SKIP("monitor hooks cannot start here");
	printf("hooks: %llu invalidated, %ld of %ld kept hit, %d of %ld remapped registered\n",
	       (unsigned long long)killed, hits, kept, fresh, gone);
	CHECK_EQ(killed, (uint64_t)gone);
	CHECK_EQ(hits, kept);
	CHECK_EQ(fresh, gone);
	return test_result();
}
