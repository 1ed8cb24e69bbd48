/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-spurious: 10,000 watched 4 KiB regions (MRMON_RANGE_SNAPSHOT)
 * in THP-backed memory, 5,000 of them (every other page) unmapped one by
 * one.  Every unmapped watch must be invalid (the correctness part).
 *
 * The module clears the word for every CLEAR, so each unmap's split of its
 * 2 MiB window invalidates the neighbours too: invalidations per real
 * unmap (kdreg2: 9,864 for 5,000) is the first figure, and spurious ones
 * must show in it when there are huge pages (the control that the count
 * can see them).  Then every invalid watch is REVALIDATEd, as the library
 * does: an unmapped one must give 0, and re-registrations per real change
 * = (real unmaps + still-mapped watches left invalid) / real unmaps is the
 * second figure.  Pinned, as a cache holds the memory (io_uring fixed
 * buffers registered after WATCH, then the words re-checked), it must stay
 * <= 1.05.  REVALIDATE re-arms only pinned pages, so the unpinned run is
 * the control: nothing re-armed (its figure is printed).
 *
 * Then fragmented memory: the pages of a 2 MiB window faulted in so that
 * neighbouring pages are not neighbouring PFNs, watched 16 pages at a
 * time with SNAPSHOT and registered, and a VMA split 1 MiB away (mprotect
 * or munmap of one page, each in a window of its own): every watch must
 * be invalidated and come back from REVALIDATE.  Control: an unpinned
 * watch of 16 pages in the same window, invalidated, 0.
 */
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include "mrmon_test.h"

#define REGIONS 10000
#define HUGE (2ul << 20)
#define FRAG_WATCH_PAGES 16
#define FRAG_WATCHES 16		/* the first 1 MiB of the window */

static int thp;

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

/* REVALIDATE n watches in batches; exp[] gets the words written back. */
static void revalidate_all(struct mon *m, const uint32_t *slot, uint64_t *exp, int n)
{
	static struct mrmon_unwatch_entry e[1024];
	int step = m->hs.max_batch < 1024 ? (int)m->hs.max_batch : 1024;

	for (int i = 0; i < n; i += step) {
		int k = n - i < step ? n - i : step;
		struct mrmon_batch b = { .entries = (uintptr_t)e, .count = (uint32_t)k };

		for (int j = 0; j < k; j++)
			e[j] = (struct mrmon_unwatch_entry){ .slot = slot[i + j], .expected = exp[i + j] };
		CHECK_EQ(mon_ioctl(m->fd, MRMON_IOC_REVALIDATE, &b), 0);
		CHECK_EQ(b.done, k);
		for (int j = 0; j < k; j++)
			exp[i + j] = e[j].expected;
	}
}

static void run(int pinned)
{
	static struct iovec iov[REGIONS];
	static uint32_t slot[REGIONS], rslot[REGIONS];
	static uint64_t exp[REGIONS], rexp[REGIONS];
	static int ridx[REGIONS];
	size_t len = REGIONS * PAGE;
	const char *name = pinned ? "pinned" : "unpinned";
	struct io_uring ring;
	struct mon m;
	char *raw, *p;
	long huge_kb, lost_real = 0, spurious = 0, inval, missed = 0, left = 0, rearmed = 0;
	long stale = 0;
	int n = 0;

	raw = mmap(NULL, len + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		return;
	p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	madvise(p, len, MADV_HUGEPAGE);
	memset(p, 5, len);
	huge_kb = anon_huge_kb();
	CHECK_EQ(mon_open(&m, REGIONS, 16384), 0);
	for (int i = 0; i < REGIONS; i++)
		CHECK_EQ(mon_watch_flags(&m, p + i * PAGE, PAGE, i, MRMON_RANGE_SNAPSHOT,
					 &slot[i], &exp[i]), 0);
	if (pinned) {
		/* Watch, register, re-check: as a cache does. */
		CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0);
		for (int i = 0; i < REGIONS; i++)
			iov[i] = (struct iovec){ p + i * PAGE, PAGE };
		CHECK_EQ(io_uring_register_buffers(&ring, iov, REGIONS), 0);
		for (int i = 0; i < REGIONS; i++)
			stale += !mon_valid(&m, slot[i], exp[i]);
		CHECK_EQ(stale, 0);
	}
	for (int i = 1; i < REGIONS; i += 2)
		munmap(p + i * PAGE, PAGE);
	inval = (long)m.hdr->invalidations;
	for (int i = 0; i < REGIONS; i++) {
		int valid = mon_valid(&m, slot[i], exp[i]);

		if (i % 2 && valid)
			lost_real++;
		if (!(i % 2) && !valid)
			spurious++;
		if (!valid) {
			ridx[n] = i;
			rslot[n] = slot[i];
			rexp[n++] = exp[i];
		}
	}
	printf("%-8s THP %ld MiB: without REVALIDATE %ld invalidations for %d unmaps "
	       "(ratio %.3f), %ld spurious, %ld missed\n",
	       name, huge_kb / 1024, inval, REGIONS / 2, inval / (REGIONS / 2.0), spurious,
	       lost_real);
	CHECK_EQ(lost_real, 0);
	CHECK_EQ(inval, REGIONS / 2 + spurious);
	if (huge_kb >= 2048)
		CHECK(spurious > 0);	/* the control: the count sees them */

	revalidate_all(&m, rslot, rexp, n);
	for (int k = 0; k < n; k++) {
		int i = ridx[k];

		if (i % 2) {
			missed += rexp[k] != 0;
		} else if (rexp[k]) {
			rearmed++;
			CHECK(rexp[k] != exp[i] && mon_valid(&m, slot[i], rexp[k]));
		} else {
			left++;
		}
	}
	printf("%-8s with REVALIDATE of the %d invalid: %ld re-armed, %ld left invalid, "
	       "%ld unmapped re-armed; re-registrations per real change %.3f\n",
	       name, n, rearmed, left, missed, (REGIONS / 2 + left) / (REGIONS / 2.0));
	CHECK_EQ(missed, 0);
	if (pinned)
		CHECK((REGIONS / 2 + left) / (REGIONS / 2.0) <= 1.05);
	else
		CHECK_EQ(rearmed, 0);	/* the control: no pin, no re-arm */
	CHECK_EQ(m.hdr->revalidations, rearmed);
	mon_close(&m);
	if (pinned)
		io_uring_queue_exit(&ring);
	munmap(raw, len + HUGE);
}

/* The PFN of a present page (root reads them from pagemap), or 0. */
static uint64_t pfn_of(int pagemap, const void *addr)
{
	uint64_t e = 0;

	if (pread(pagemap, &e, sizeof(e), (off_t)((uintptr_t)addr / PAGE * sizeof(e))) != sizeof(e))
		return 0;
	return e >> 63 ? e & ((1ull << 55) - 1) : 0;
}

/*
 * Fault the window's pages in, each followed by a page of a scratch
 * mapping unmapped after.  Reverse order alone is not enough: the free
 * lists may hand out PFNs ascending or descending (once in the guest,
 * after the runs above, 237 of 255 neighbouring pages got neighbouring
 * PFNs).  Interleaved, neighbouring pages of the window are two
 * allocations apart either way.
 */
static void fault_fragmented(char *p)
{
	char *scratch = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(scratch != MAP_FAILED);
	if (scratch == MAP_FAILED)
		return;
	madvise(p, HUGE, MADV_NOHUGEPAGE);
	madvise(scratch, HUGE, MADV_NOHUGEPAGE);
	for (long i = HUGE / PAGE - 1; i >= 0; i--) {
		p[i * PAGE] = (char)i;
		scratch[i * PAGE] = 1;
	}
	munmap(scratch, HUGE);
}

/*
 * A fresh 2 MiB window, fragmented (fault_fragmented()), FRAG_WATCHES
 * watches of FRAG_WATCH_PAGES pages over its first 1 MiB, registered
 * after WATCH, and one unpinned (the control) beyond the split; one VMA
 * split 1 MiB away (mprotect or munmap of one page), then REVALIDATE of
 * every watch.
 */
static void run_fragmented(int unmap)
{
	char *raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const char *what = unmap ? "munmap" : "mprotect";
	uint64_t before, re, exp[FRAG_WATCHES], old[FRAG_WATCHES], cexp, cold;
	uint32_t slot[FRAG_WATCHES], cslot;
	struct iovec iov[FRAG_WATCHES];
	int pagemap, contiguous = 0, known = 0, invalid = 0, back = 0, stale = 0;
	struct io_uring ring;
	struct mon m;
	char *p, *ctl;

	CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		return;
	p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	fault_fragmented(p);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	for (int i = 0; pagemap >= 0 && i + 1 < FRAG_WATCHES * FRAG_WATCH_PAGES; i++) {
		uint64_t a = pfn_of(pagemap, p + i * PAGE), b = pfn_of(pagemap, p + (i + 1) * PAGE);

		known += a && b;
		contiguous += a && b && b == a + 1;
	}
	if (pagemap >= 0)
		close(pagemap);
	printf("fragmented: %d of %d neighbouring pages in the watches are neighbouring PFNs\n",
	       contiguous, known);
	CHECK(contiguous <= known / 4);		/* fragmented indeed */
	CHECK_EQ(mon_open(&m, FRAG_WATCHES + 1, 256), 0);
	CHECK_EQ(io_uring_queue_init(4, &ring, 0), 0);
	for (int i = 0; i < FRAG_WATCHES; i++) {
		iov[i] = (struct iovec){ p + i * FRAG_WATCH_PAGES * PAGE, FRAG_WATCH_PAGES * PAGE };
		CHECK_EQ(mon_watch_flags(&m, iov[i].iov_base, iov[i].iov_len, i,
					 MRMON_RANGE_SNAPSHOT, &slot[i], &exp[i]), 0);
	}
	ctl = p + HUGE / 2 + 64 * PAGE;
	CHECK_EQ(mon_watch_flags(&m, ctl, FRAG_WATCH_PAGES * PAGE, FRAG_WATCHES,
				 MRMON_RANGE_SNAPSHOT, &cslot, &cexp), 0);
	CHECK_EQ(io_uring_register_buffers(&ring, iov, FRAG_WATCHES), 0);
	for (int i = 0; i < FRAG_WATCHES; i++)
		stale += !mon_valid(&m, slot[i], exp[i]);
	CHECK_EQ(stale, 0);				/* the re-check */
	before = m.hdr->invalidations;
	re = m.hdr->revalidations;
	if (unmap)
		CHECK_EQ(munmap(p + HUGE / 2 + 8 * PAGE, PAGE), 0);
	else
		CHECK_EQ(mprotect(p + HUGE / 2 + 8 * PAGE, PAGE, PROT_READ), 0);
	for (int i = 0; i < FRAG_WATCHES; i++) {
		old[i] = exp[i];
		invalid += !mon_valid(&m, slot[i], exp[i]);
	}
	/* Without THP configured (PREEMPT_RT) the split sends no CLEAR. */
	CHECK(mon_valid(&m, cslot, cexp) == !thp);
	revalidate_all(&m, slot, exp, FRAG_WATCHES);
	cold = cexp;
	revalidate_all(&m, &cslot, &cexp, 1);
	for (int i = 0; i < FRAG_WATCHES; i++)
		back += exp[i] != 0 && exp[i] != old[i] && mon_valid(&m, slot[i], exp[i]);
	printf("fragmented: %s 1 MiB away: %d of %d pinned watches invalidated (%llu "
	       "invalidations), %d re-armed (%llu revalidations); the unpinned control %s\n",
	       what, invalid, FRAG_WATCHES, (unsigned long long)(m.hdr->invalidations - before),
	       back, (unsigned long long)(m.hdr->revalidations - re),
	       cexp ? "re-armed" : "invalidated, 0");
	if (thp) {
		CHECK_EQ(invalid, FRAG_WATCHES);	/* the split's CLEAR reached them */
		CHECK_EQ(back, FRAG_WATCHES);
		CHECK_EQ(cexp, 0);
		CHECK_EQ(m.hdr->revalidations - re, FRAG_WATCHES);
	} else {
		CHECK_EQ(invalid, 0);
		CHECK_EQ(m.hdr->revalidations - re, 0);
	}
	for (int i = 0; i < FRAG_WATCHES; i++)
		CHECK_EQ(mon_unwatch(&m, slot[i], exp[i] ? exp[i] : old[i]), 0);
	CHECK_EQ(mon_unwatch(&m, cslot, cexp ? cexp : cold), 0);
	mon_close(&m);
	io_uring_queue_exit(&ring);
	munmap(raw, 2 * HUGE);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/sys/module/mrmon", F_OK))
		SKIP("mrmon not loaded");
	run(1);
	run(0);
	thp = mon_have_thp();
	run_fragmented(0);
	run_fragmented(1);
	return test_result();
}
