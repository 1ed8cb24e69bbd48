/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-events: every row of the event table in docs/mrmon.md.  Each
 * operation runs on a fresh mapping; the word must be invalid (with the
 * documented cause) or still valid, as the table says.  Every CLEAR
 * invalidates at once, the splits' included.  An invalidated watch is
 * gone (ABI 3: UNWATCH answers -ESTALE), a valid one is unwatched.  Rows
 * that ABI 2's REVALIDATE re-armed are still pinned by an io_uring fixed
 * buffer registered after WATCH, as a cache does (watch, register,
 * re-check the word), and say so in the output.
 */
#include <liburing.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include "mrmon_test.h"

#define HUGE (2ul << 20)

static struct mon m;
static struct io_uring ring;
/* Events read so far: one operation can report several watches. */
static struct mrmon_event seen_ev[256];
static int nseen;

struct watch {
	uint32_t slot;
	uint64_t expected;
	void *p;
	size_t len;
};

static struct watch watch(void *p, size_t len)
{
	struct watch w = { 0, 0, p, len };

	CHECK_EQ(mon_watch(&m, p, len, (uintptr_t)p, &w.slot, &w.expected), 0);
	return w;
}

/* After WATCH, as a cache does: register the watched ranges (one fixed
 * buffer each, which pins them), then re-check that every word is still
 * valid. */
static void pin(const struct watch *w, int n)
{
	struct iovec iov[4];

	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){ w[i].p, w[i].len };
	CHECK_EQ(io_uring_register_buffers(&ring, iov, (unsigned int)n), 0);
	for (int i = 0; i < n; i++)
		CHECK(mon_valid(&m, w[i].slot, w[i].expected));
}

static void unpin(void)
{
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0);
}

/* The cause of the last event of this watch's generation, or 0. */
static uint32_t cause_seen(struct watch w)
{
	int n = mon_events(&m, seen_ev + nseen, 256 - nseen);
	uint32_t seen = 0;

	nseen += n > 0 ? n : 0;
	for (int i = 0; i < nseen; i++)
		if (seen_ev[i].slot == w.slot && seen_ev[i].generation == w.expected >> 1)
			seen = seen_ev[i].cause;
	return seen;
}

/*
 * The row's verdict: valid or not now (with the cause).  An invalidated
 * watch is gone from the module (ABI 3): UNWATCH says -ESTALE; a valid one
 * is unwatched.  (`revalid`, what ABI 2's REVALIDATE did, is printed only.)
 */
static void expect(const char *row, struct watch w, int valid, uint32_t cause, int revalid)
{
	int got = mon_valid(&m, w.slot, w.expected);
	uint32_t seen = cause_seen(w);

	printf("  %-34s %s", row, got ? "valid" : "invalid");
	if (!got)
		printf(" (cause %u)%s", seen, revalid ? ", ABI 2 re-armed it" : "");
	printf("%s\n", got == valid ? "" : "   <-- WRONG");
	if (got != valid)
		__atomic_fetch_add(&test_failures, 1, __ATOMIC_RELAXED);
	if (!valid && cause)
		CHECK_EQ(seen, cause);
	if (valid)
		CHECK_EQ(seen, 0);
	CHECK_EQ(mon_unwatch(&m, w.slot, w.expected), got ? 0 : -ESTALE);
}

static char *map_small(size_t pages)
{
	char *p = mon_map_anon(pages * PAGE);

	CHECK(p != NULL);
	madvise(p, pages * PAGE, MADV_NOHUGEPAGE);
	return p;
}

/* A 2 MiB-aligned block; backed by one transparent huge page (or NULL
 * when it cannot be), or by 4 KiB pages only. */
static char *map_block(int huge)
{
	char *raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p, line[256];
	unsigned long kb = 0;
	FILE *f;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	/* Only the aligned block stays: a split is then inside it. */
	if (p > raw)
		munmap(raw, p - raw);
	munmap(p + HUGE, raw + HUGE - p);
	madvise(p, HUGE, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 7, HUGE);
	if (!huge)
		return p;
	f = fopen("/proc/self/smaps_rollup", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "AnonHugePages: %lu kB", &kb);
	if (f)
		fclose(f);
	if (kb < 2048) {
		munmap(p, HUGE);
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
	expect("munmap", w, 0, MRMON_CAUSE_UNMAP, 0);

	p = map_small(2);
	w = watch(p, 2 * PAGE);
	munmap(p + PAGE, PAGE);
	expect("munmap of part", w, 0, MRMON_CAUSE_UNMAP, 0);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	madvise(p, PAGE, MADV_DONTNEED);
	expect("MADV_DONTNEED", w, 0, MRMON_CAUSE_CLEAR, 0);
	munmap(p, PAGE);

	/* Pinned, as a registration holds it: the old page cannot be
	 * freed, so the touch maps another one. */
	p = map_small(1);
	w = watch(p, PAGE);
	pin(&w, 1);
	madvise(p, PAGE, MADV_DONTNEED);
	p[0] = 3;
	expect("MADV_DONTNEED, touch (pinned)", w, 0, MRMON_CAUSE_CLEAR, 0);
	unpin();
	munmap(p, PAGE);

	/* The PTE keeps its page (marked clean): the same PFN, re-armed
	 * when pinned; the unpinned page beside it is not. */
	p = map_small(2);
	w = watch(p, PAGE);
	w2 = watch(p + PAGE, PAGE);
	pin(&w, 1);
	madvise(p, 2 * PAGE, MADV_FREE);
	expect("MADV_FREE (pinned)", w, 0, MRMON_CAUSE_CLEAR, 1);
	expect("  control: MADV_FREE (unpinned)", w2, 0, MRMON_CAUSE_CLEAR, 0);
	unpin();
	munmap(p, 2 * PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	/* Move onto a page of our own: an address never reserved may be
	 * another mapping's (6.12 puts ld.so's data there). */
	q = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(q != MAP_FAILED);
	q = mremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	CHECK(q != MAP_FAILED);
	expect("mremap move", w, 0, MRMON_CAUSE_UNMAP, 0);
	munmap(q, PAGE);

	p = map_small(2);
	w = watch(p + PAGE, PAGE);
	w2 = watch(p, PAGE);
	mremap(p, 2 * PAGE, PAGE, 0);
	expect("mremap shrink (tail)", w, 0, MRMON_CAUSE_UNMAP, 0);
	expect("mremap shrink (head kept)", w2, 1, 0, 1);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	mprotect(p, PAGE, PROT_READ);
	expect("mprotect", w, 1, 0, 1);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	CHECK(mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p);
	p[0] = 4;
	expect("mmap MAP_FIXED over", w, 0, MRMON_CAUSE_UNMAP, 0);
	munmap(p, PAGE);

	p = map_small(1);
	w = watch(p, PAGE);
	f = fopen("/proc/self/clear_refs", "w");
	CHECK(f != NULL);
	if (f) {
		fputs("4\n", f);
		fclose(f);
	}
	expect("clear_refs (soft dirty)", w, 1, 0, 1);
	munmap(p, PAGE);

	/* fork: the parent's write-protection is PROTECTION_PAGE (kept);
	 * the parent's first write copies the page: CLEAR, new PFN (the
	 * child still maps the old one). */
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
	expect("fork (parent)", w, 1, 0, 1);
	w = watch(p, PAGE);
	p[0] = 1;
	expect("write after fork (COW)", w, 0, MRMON_CAUSE_CLEAR, 0);
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
	expect("fork, MADV_DONTFORK", w, 1, 0, 1);
	munmap(p, PAGE);

	/* Grows in place when the next page is free. */
	p = map_small(2);
	munmap(p + PAGE, PAGE);
	w = watch(p, PAGE);
	q = mremap(p, PAGE, 2 * PAGE, 0);
	CHECK(q == p);
	expect("mremap grow in place", w, 1, 0, 1);
	munmap(p, 2 * PAGE);
}

/* Splitting a VMA in a 2 MiB window without any huge page still sends
 * CLEAR over the window (6.1): harmless, re-armed when pinned.  Without
 * THP configured (PREEMPT_RT) the split sends nothing: both stay valid. */
static void row_vma_split(void)
{
	char *p = map_block(0);
	struct watch w, ctl;

	CHECK(p != NULL);
	if (!p)
		return;
	w = watch(p + 10 * PAGE, 4 * PAGE);
	ctl = watch(p + 20 * PAGE, 4 * PAGE);
	pin(&w, 1);
	mprotect(p + 100 * PAGE, PAGE, PROT_READ);
	if (mon_have_thp()) {
		expect("VMA split by mprotect (no THP)", w, 0, MRMON_CAUSE_CLEAR, 1);
		expect("  control: the same, unpinned", ctl, 0, MRMON_CAUSE_CLEAR, 0);
	} else {
		expect("VMA split, THP not configured", w, 1, 0, 1);
		expect("  the same, unpinned", ctl, 1, 0, 1);
	}
	unpin();
	munmap(p, HUGE);
}

/* The split operations of rows_huge(), on p100 of a block. */
static void split_op(char *p, int op)
{
	if (op == 0)
		munmap(p + 100 * PAGE, PAGE);
	else if (op == 1)
		madvise(p + 100 * PAGE, PAGE, MADV_DONTNEED);
	else if (op == 2)
		mprotect(p + 100 * PAGE, PAGE, PROT_READ);
	else
		madvise(p + 100 * PAGE, PAGE, MADV_DONTFORK);
}

/*
 * Splits: watchers on p10 and p100 of a THP-backed 2 MiB block, both
 * pinned; the operation hits p100 only (docs/mrmon.md, "Splits").  The
 * pin holds the whole huge page, so p20 of it, watched but not
 * registered, cannot be freed either: re-armed.  The control is p10 of
 * another THP-backed block, unpinned, through the same operation: 0.
 */
static void rows_huge(void)
{
	static const char *names[] = { "munmap", "MADV_DONTNEED", "mprotect", "MADV_DONTFORK" };
	char *p, *q;

	for (int op = 0; op < 4; op++) {
		char row[64];
		struct watch w[2], w20, ctl;

		p = map_block(1);
		q = map_block(1);
		if (!p || !q) {
			printf("  (no transparent huge page: split rows skipped)\n");
			if (p)
				munmap(p, HUGE);
			if (q)
				munmap(q, HUGE);
			return;
		}
		w[0] = watch(p + 10 * PAGE, PAGE);
		w[1] = watch(p + 100 * PAGE, PAGE);
		w20 = watch(p + 20 * PAGE, PAGE);
		ctl = watch(q + 10 * PAGE, PAGE);
		pin(w, 2);
		split_op(p, op);
		split_op(q, op);
		snprintf(row, sizeof(row), "THP split by %s", names[op]);
		expect(row, w[0], 0, MRMON_CAUSE_CLEAR, 1);
		/* The split's CLEAR comes first; munmap's UNMAP and the
		 * zap of DONTNEED are real changes of p100 itself. */
		snprintf(row, sizeof(row), "  the page itself (%s)", names[op]);
		expect(row, w[1], 0, MRMON_CAUSE_CLEAR, op >= 2);
		expect("  p20, in the pinned huge page", w20, 0, MRMON_CAUSE_CLEAR, 1);
		expect("  control: another THP, unpinned", ctl, 0, MRMON_CAUSE_CLEAR, 0);
		unpin();
		munmap(p, HUGE);
		munmap(q, HUGE);
	}

	p = map_block(1);
	if (p) {
		struct watch w = watch(p + 10 * PAGE, PAGE);

		madvise(p, HUGE, MADV_DONTNEED);
		expect("MADV_DONTNEED of the THP", w, 0, MRMON_CAUSE_CLEAR, 0);
		munmap(p, HUGE);
	}

	/* MADV_COLLAPSE (6.1+) copies 4 KiB pages into a new huge page;
	 * it refuses pinned pages, so this row is unpinned. */
	p = map_block(0);
	if (p) {
		struct watch w;

		madvise(p, HUGE, MADV_HUGEPAGE);
		w = watch(p + 10 * PAGE, PAGE);
		if (madvise(p, HUGE, 25 /* MADV_COLLAPSE */) == 0)
			expect("MADV_COLLAPSE", w, 0, MRMON_CAUSE_CLEAR, 0);
		else {
			printf("  MADV_COLLAPSE unavailable (%s): row skipped\n", strerror(errno));
			mon_unwatch(&m, w.slot, w.expected);
		}
		munmap(p, HUGE);
	}
}

int main(void)
{
	if (io_uring_queue_init(4, &ring, 0))
		SKIP("io_uring unavailable");
	CHECK_EQ(mon_open(&m, 64, 64), 0);
	CHECK(!(m.hs.features & (1ull << 3)));	/* ABI 2's REVALIDATE */
	rows_small();
	row_vma_split();
	rows_huge();
	mon_close(&m);
	io_uring_queue_exit(&ring);
	return test_result();
}
