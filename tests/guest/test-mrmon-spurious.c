/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-spurious: 10,000 watched 4 KiB regions in THP-backed memory,
 * 5,000 of them (every other page) unmapped one by one.  Every unmapped
 * watch must be invalid (the correctness part); the ratio of invalidations
 * to real unmaps is the measurement (kdreg2: 9,864 for 5,000).  With the
 * PFN check, the watches still mapped must all stay valid: the splits'
 * CLEAR over each 2 MiB window left their PFNs alone.  Control: with the
 * check off the same run must show spurious invalidations (so the count
 * can see them).  Runs on pinned memory (io_uring fixed buffers, as a
 * cache would hold it) and on unpinned memory.
 */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include "mrmon_test.h"

#define REGIONS 10000
#define HUGE (2ul << 20)

static int set_pfn_check(int on)
{
	FILE *f = fopen("/sys/module/mrmon/parameters/pfn_check", "w");

	if (!f)
		return -errno;
	fprintf(f, "%d\n", on);
	return fclose(f) ? -errno : 0;
}

static long anon_huge_kb(void)
{
	char line[256];
	long kb = 0, v;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			kb = v;
	if (f)
		fclose(f);
	return kb;
}

static void run(int pinned, int pfn)
{
	static struct iovec iov[REGIONS];
	static uint32_t slot[REGIONS];
	static uint64_t exp[REGIONS];
	size_t len = REGIONS * PAGE;
	struct io_uring ring;
	struct mon m;
	char *raw, *p;
	long huge_kb, lost_real = 0, spurious = 0, inval;

	CHECK_EQ(set_pfn_check(pfn), 0);
	raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		return;
	p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	madvise(p, len, MADV_HUGEPAGE);
	memset(p, 5, len);
	huge_kb = anon_huge_kb();
	if (pinned) {
		CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0);
		for (int i = 0; i < REGIONS; i++)
			iov[i] = (struct iovec){ p + i * PAGE, PAGE };
		CHECK_EQ(io_uring_register_buffers(&ring, iov, REGIONS), 0);
	}
	CHECK_EQ(mon_open(&m, REGIONS, 16384), 0);
	for (int i = 0; i < REGIONS; i++)
		CHECK_EQ(mon_watch(&m, p + i * PAGE, PAGE, i, &slot[i], &exp[i]), 0);
	for (int i = 1; i < REGIONS; i += 2)
		munmap(p + i * PAGE, PAGE);
	inval = (long)m.hdr->invalidations;
	for (int i = 0; i < REGIONS; i++) {
		int valid = mon_valid(&m, slot[i], exp[i]);

		if (i % 2 && valid)
			lost_real++;
		if (!(i % 2) && !valid)
			spurious++;
	}
	printf("%-8s pfn_check=%d  THP %ld MiB: %ld invalidations for %d unmaps "
	       "(ratio %.3f), %ld spurious, %ld missed\n",
	       pinned ? "pinned" : "unpinned", pfn, huge_kb / 1024, inval, REGIONS / 2,
	       inval / (REGIONS / 2.0), spurious, lost_real);
	CHECK_EQ(lost_real, 0);
	CHECK_EQ(inval, REGIONS / 2 + spurious);
	if (pfn)
		CHECK_EQ(spurious, 0);
	else if (huge_kb >= 2048)
		CHECK(spurious > 0);	/* the control */
	mon_close(&m);
	if (pinned)
		io_uring_queue_exit(&ring);
	munmap(raw, len + HUGE);
}

int main(void)
{
	if (access("/sys/module/mrmon", F_OK))
		SKIP("mrmon not loaded");
	run(1, 1);
	run(1, 0);
	run(0, 1);
	set_pfn_check(1);
	return test_result();
}
