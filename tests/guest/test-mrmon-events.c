/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-events: every row of the event table in docs/mrmon.md.  Each
 * operation runs on a fresh watched mapping; the word must be invalid (with
 * the documented cause) or still valid, as the table says.  Every row runs
 * twice: with the module's PFN check on and off (pfn_check parameter).
 * With it off every CLEAR invalidates: that pass is the control that the
 * "stays valid" rows of split operations are the check's doing, and the
 * "invalid" rows of both passes are the control for the "valid" rows.
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include "mrmon_test.h"

#define HUGE (2ul << 20)

static struct mon m;
static int pfn_on;
/* Events read so far: one operation can report several watches. */
static struct mrmon_event seen_ev[256];
static int nseen;

static int set_pfn_check(int on)
{
	FILE *f = fopen("/sys/module/mrmon/parameters/pfn_check", "w");

	if (!f)
		return -errno;
	fprintf(f, "%d\n", on);
	return fclose(f) ? -errno : 0;
}

struct watch {
	uint32_t slot;
	uint64_t expected;
};

static struct watch watch(const void *p, size_t len)
{
	struct watch w = { 0, 0 };

	CHECK_EQ(mon_watch(&m, p, len, (uintptr_t)p, &w.slot, &w.expected), 0);
	return w;
}

/* The row's verdict; drains events and unwatches. */
static void expect(const char *row, struct watch w, int valid, uint32_t cause)
{
	int n = mon_events(&m, seen_ev + nseen, 256 - nseen);
	int got = mon_valid(&m, w.slot, w.expected);
	uint32_t seen = 0;

	nseen += n > 0 ? n : 0;
	for (int i = 0; i < nseen; i++)
		if (seen_ev[i].slot == w.slot && seen_ev[i].generation == w.expected >> 1)
			seen = seen_ev[i].cause;

	printf("  %-28s pfn_check=%d  %s", row, pfn_on, got ? "valid" : "invalid");
	if (!got)
		printf(" (cause %u)", seen);
	printf("%s\n", got == valid ? "" : "   <-- WRONG");
	if (got != valid)
		test_failures++;
	if (!valid && cause)
		CHECK_EQ(seen, cause);
	if (valid)
		CHECK_EQ(seen, 0);
	CHECK_EQ(mon_unwatch(&m, w.slot, w.expected), 0);
}

static char *map_small(size_t pages)
{
	char *p = mon_map_anon(pages * PAGE);

	CHECK(p != NULL);
	madvise(p, pages * PAGE, MADV_NOHUGEPAGE);
	return p;
}

/* A 2 MiB-aligned block backed by one transparent huge page, or NULL. */
static char *map_huge(void)
{
	char *raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p, line[256];
	unsigned long kb = 0;
	FILE *f;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	madvise(p, HUGE, MADV_HUGEPAGE);
	memset(p, 7, HUGE);
	f = fopen("/proc/self/smaps_rollup", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "AnonHugePages: %lu kB", &kb);
	if (f)
		fclose(f);
	if (kb < 2048) {
		munmap(raw, 2 * HUGE);
		return NULL;
	}
	return p;
}

static void rows_small(void)
{
	struct watch w, w2;
	char *p, *q;
	pid_t pid;
	int fds[2], status;
	FILE *f;

	p = map_small(2);
	w = watch(p, 2 * PAGE);
	munmap(p, 2 * PAGE);
	expect("munmap", w, 0, MRMON_CAUSE_UNMAP);

	p = map_small(2);
	w = watch(p, 2 * PAGE);
	munmap(p + PAGE, PAGE);
	expect("munmap of part", w, 0, MRMON_CAUSE_UNMAP);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	madvise(p, PAGE, MADV_DONTNEED);
	expect("MADV_DONTNEED", w, 0, MRMON_CAUSE_CLEAR);
	munmap(p, PAGE);

	/* The PTE keeps its page (marked clean); only a later reclaim,
	 * impossible for a pinned page, would drop it and CLEAR again. */
	p = map_small(1);
	w = watch(p, PAGE);
	madvise(p, PAGE, MADV_FREE);
	expect("MADV_FREE", w, pfn_on, MRMON_CAUSE_CLEAR);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	q = mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, p + 64 * PAGE);
	expect("mremap move", w, 0, MRMON_CAUSE_UNMAP);
	munmap(q, PAGE);

	p = map_small(2);
	w = watch(p + PAGE, PAGE);
	w2 = watch(p, PAGE);
	mremap(p, 2 * PAGE, PAGE, 0);
	expect("mremap shrink (tail)", w, 0, MRMON_CAUSE_UNMAP);
	expect("mremap shrink (head kept)", w2, 1, 0);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	mprotect(p, PAGE, PROT_READ);
	expect("mprotect", w, 1, 0);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	CHECK(mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p);
	expect("mmap MAP_FIXED over", w, 0, MRMON_CAUSE_UNMAP);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	f = fopen("/proc/self/clear_refs", "w");
	CHECK(f != NULL);
	if (f) {
		fputs("4\n", f);
		fclose(f);
	}
	expect("clear_refs (soft dirty)", w, 1, 0);
	munmap(p, PAGE);

	/* fork: the parent's write-protection is PROTECTION_PAGE (kept);
	 * the parent's first write copies the page: CLEAR, new PFN. */
	p = map_small(1);
	w = watch(p, PAGE);
	CHECK_EQ(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		char c;

		close(fds[1]);
		_exit(read(fds[0], &c, 1) < 0);
	}
	close(fds[0]);
	expect("fork (parent)", w, 1, 0);
	w = watch(p, PAGE);
	p[0] = 1;
	expect("write after fork (COW)", w, 0, MRMON_CAUSE_CLEAR);
	close(fds[1]);
	waitpid(pid, &status, 0);
	munmap(p, PAGE);

	p = map_small(1);
	madvise(p, PAGE, MADV_DONTFORK);
	w = watch(p, PAGE);
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	p[0] = 2;
	expect("fork, MADV_DONTFORK", w, 1, 0);
	munmap(p, PAGE);

	/* Grows in place when the next page is free. */
	p = map_small(2);
	munmap(p + PAGE, PAGE);
	w = watch(p, PAGE);
	q = mremap(p, PAGE, 2 * PAGE, 0);
	CHECK(q == p);
	expect("mremap grow in place", w, 1, 0);
	munmap(p, 2 * PAGE);
}

/* Splits: watchers on p10 and p20 of a THP-backed 2 MiB block; the
 * operation hits p100 only (docs/mrmon.md, "Splits"). */
static void rows_huge(void)
{
	static const char *names[] = { "munmap", "MADV_DONTNEED", "mprotect", "MADV_DONTFORK" };
	char *p;

	for (int op = 0; op < 4; op++) {
		char row[64];
		struct watch w10, w100;

		p = map_huge();
		if (!p) {
			printf("  (no transparent huge page: split rows skipped)\n");
			return;
		}
		w10 = watch(p + 10 * PAGE, PAGE);
		w100 = watch(p + 100 * PAGE, PAGE);
		if (op == 0)
			munmap(p + 100 * PAGE, PAGE);
		else if (op == 1)
			madvise(p + 100 * PAGE, PAGE, MADV_DONTNEED);
		else if (op == 2)
			mprotect(p + 100 * PAGE, PAGE, PROT_READ);
		else
			madvise(p + 100 * PAGE, PAGE, MADV_DONTFORK);
		snprintf(row, sizeof(row), "THP split by %s", names[op]);
		expect(row, w10, pfn_on, MRMON_CAUSE_CLEAR);
		snprintf(row, sizeof(row), "  the page itself (%s)", names[op]);
		/* Without the check, the split's CLEAR comes first. */
		expect(row, w100, op >= 2 ? pfn_on : 0,
		       op == 0 && pfn_on ? MRMON_CAUSE_UNMAP : MRMON_CAUSE_CLEAR);
		munmap(p, HUGE);
	}

	p = map_huge();
	if (p) {
		struct watch w = watch(p + 10 * PAGE, PAGE);

		madvise(p, HUGE, MADV_DONTNEED);
		expect("MADV_DONTNEED of the THP", w, 0, MRMON_CAUSE_CLEAR);
		munmap(p, HUGE);
	}

	/* MADV_COLLAPSE (6.1+) moves 4 KiB pages into a new huge page. */
	p = map_huge();
	if (p) {
		struct watch w;

		munmap(p, HUGE);
		p = mmap(p, HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		madvise(p, HUGE, MADV_NOHUGEPAGE);
		memset(p, 3, HUGE);
		madvise(p, HUGE, MADV_HUGEPAGE);
		w = watch(p + 10 * PAGE, PAGE);
		if (madvise(p, HUGE, 25 /* MADV_COLLAPSE */) == 0)
			expect("MADV_COLLAPSE", w, 0, MRMON_CAUSE_CLEAR);
		else
			printf("  MADV_COLLAPSE unavailable (%s): row skipped\n", strerror(errno));
		mon_unwatch(&m, w.slot, w.expected);
		munmap(p, HUGE);
	}
}

int main(void)
{
	for (pfn_on = 1; pfn_on >= 0; pfn_on--) {
		int rc = set_pfn_check(pfn_on);

		if (rc == -ENOENT)
			SKIP("mrmon not loaded");
		CHECK_EQ(rc, 0);
		CHECK_EQ(mon_open(&m, 64, 64), 0);
		nseen = 0;
		CHECK(m.hs.features & MRMON_FEATURE_REVALIDATE);
		rows_small();
		rows_huge();
		mon_close(&m);
	}
	set_pfn_check(1);
	return test_result();
}
