/* SPDX-License-Identifier: MIT */
/*
 * ABI 3 has no REVALIDATE: a CLEAR costs the region its registration.
 * Splitting the VMA inside the 2 MiB window of two cached ranges (an
 * mprotect of one page, 1 MiB away) makes the kernel send CLEAR over the
 * whole window; mrmon clears both words at once and frees both watches,
 * and nothing re-arms them: the next gets miss, register again (two new
 * registrations) and read fresh bytes.  The library never asks for a
 * re-arm (the module refuses REVALIDATE: test-mrmon-revalidate).  Control:
 * MADV_DONTNEED of the range then a write (new pages) misses once more.
 * Runs only where the kernel monitor starts (the guest); skips elsewhere.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#define WINDOW (2ul << 20)
#define LEN (64ul << 10)

static uint64_t registrations(struct mrcache *c)
{
	struct mrcache_stats st;

	CHECK_EQ(mrcache_stats_get(c, &st), 0);
	return st.registrations;
}

/* get, check through the pin, put; returns the oracle's verdict. */
static int get_check(struct oracle *o, struct mrcache *c, char *p)
{
	struct mrcache_region *r;
	int v;

	CHECK_EQ(mrcache_get(c, p, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	v = oracle_check(o, 0, r, p, LEN);
	CHECK_EQ(mrcache_put(c, r), 0);
	return v;
}

int main(void)
{
	struct mrcache_config cfg;
	struct mrcache *c;
	struct oracle o;
	char *raw, *p;
	uint64_t before, split;
	int rc;

	if (oracle_init(&o, 1, LEN))
		SKIP("io_uring unusable here");
	oracle_config(&o, &cfg, MRCACHE_MONITOR_KERNEL, 64);
	rc = mrcache_create(&cfg, &c);
	if (rc)
		SKIP("the kernel monitor does not start here (%s)", strerror(-rc));
	raw = mmap(NULL, 2 * WINDOW, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(raw != MAP_FAILED);
	p = (char *)(((uintptr_t)raw + WINDOW - 1) & ~(WINDOW - 1));
	memset(p, 1, WINDOW);

	CHECK_EQ(get_check(&o, c, p), ORACLE_FRESH);
	CHECK_EQ(get_check(&o, c, p + WINDOW / 4), ORACLE_FRESH);
	before = registrations(c);

	/* The split: CLEAR over [p, p + 2 MiB), no page of either range moves.
	 * Without transparent huge pages (PREEMPT_RT) a VMA split sends no
	 * CLEAR (vma_adjust_trans_huge() is a stub): nothing to re-register.
	 */
	split = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0 ? 2 : 0;
	CHECK_EQ(mprotect(p + WINDOW / 2, 4096, PROT_READ), 0);
	CHECK_EQ(get_check(&o, c, p), ORACLE_FRESH);
	CHECK_EQ(get_check(&o, c, p + WINDOW / 4), ORACLE_FRESH);
	CHECK_EQ(registrations(c), before + split);
	printf("mprotect split in the window: %llu registrations (before: %llu)\n",
	       (unsigned long long)registrations(c), (unsigned long long)before);

	/* The control: new pages at the same addresses must not be re-armed. */
	CHECK_EQ(madvise(p, LEN, MADV_DONTNEED), 0);
	memset(p, 2, LEN);
	CHECK_EQ(get_check(&o, c, p), ORACLE_FRESH);
	CHECK_EQ(registrations(c), before + split + 1);
	printf("MADV_DONTNEED + write: %llu registrations (before: %llu)\n",
	       (unsigned long long)registrations(c), (unsigned long long)before);

	CHECK_EQ(mrcache_destroy(c), 0);
	munmap(raw, 2 * WINDOW);
	oracle_fini(&o);
	return test_result();
}
