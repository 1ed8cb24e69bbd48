/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-revalidate: what REVALIDATE gives back, one outcome at a
 * time, on watches made with MRMON_RANGE_SNAPSHOT unless said otherwise,
 * and pinned by an io_uring fixed buffer registered after WATCH (as a
 * cache does: watch, register, re-check) unless said otherwise.
 *   word still valid                     the same expected; nothing counted
 *   a VMA split in the 2 MiB window      re-armed: a newer generation, the
 *     (mprotect elsewhere: CLEAR)        word valid, `revalidations` + 1;
 *                                        later events carry the new
 *                                        generation; UNWATCH and REVALIDATE
 *                                        with the old expected: ESTALE
 *   the same split, unpinned             0 (REVALIDATE needs the pin)
 *   MADV_DONTNEED, not touched again     0 (a page not present)
 *   MADV_DONTNEED, touched               0 (a new page)
 *   munmap, mmap at the same address     0 (UNMAP seen, whatever the PFN)
 *   watched without SNAPSHOT             0
 *   pages not present at WATCH           0, even once they are
 * After a 0 the generation is the old one (UNWATCH with it works).  Each
 * 0 has a re-armed control in the same window and operation.  Unpinned,
 * MADV_DONTNEED then touch often maps the freed page again: REVALIDATE
 * must give 0 all the same (a figure: how often pagemap showed the same
 * PFN).
 *
 * A regression test of a caller that breaks the protocol: WATCH
 * fingerprints page X, MADV_DONTNEED frees X, a touch maps Y, Y is
 * registered and the re-check (the word is invalid) ignored; X is then
 * brought back under the address (DONTNEED and touch until pagemap shows
 * it, bounded: a round where it never comes back is inconclusive, and at
 * least one of the 32 must not be).  REVALIDATE must give 0: the word
 * would otherwise be valid over a registration of Y (before ec78fe2 it
 * was, 32 rounds of 32).  Control: X pinned too (a second ring), re-armed.
 *
 * Then a race: one thread REVALIDATEs a pinned range (an io_uring fixed
 * buffer) over and over while another replaces its pages (MADV_DONTNEED,
 * write) and splits its VMA (mprotect), for MRMON_RACE_SECONDS (3).  Each
 * time REVALIDATE gives a word and the word is still valid, the
 * registration is read through the pin (WRITE_FIXED into a memfd) and must
 * hold what the mapping holds.  A 0 re-registers (watch, register,
 * re-check).  Control: a page replaced on purpose before the race reads
 * differently through the pin, and its word is invalid.
 *
 * Without THP configured (PREEMPT_RT) a VMA split sends no CLEAR, and no
 * other operation sends a harmless one: the split outcomes check that the
 * words stay valid instead, and re-arming cannot be reached (the race
 * still checks that no registration is wrong and that 0s are given).
 */
#include <liburing.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include "mrmon_test.h"

#define HUGE (2ul << 20)
#define RACE_PAGES 16
#define MISUSE_ROUNDS 32
#define MISUSE_TRIES 64		/* DONTNEED and touch, to bring X back */

static struct mon m;
static struct io_uring ring;
static int thp;
static int pagemap = -1;

struct watch {
	uint32_t slot;
	uint64_t e;
	void *p;
	size_t len;
};

static struct watch watch_flags(void *p, size_t len, uint32_t flags)
{
	struct watch w = { 0, 0, p, len };

	CHECK_EQ(mon_watch_flags(&m, p, len, (uintptr_t)p, flags, &w.slot, &w.e), 0);
	return w;
}

static struct watch watch(void *p, size_t len)
{
	return watch_flags(p, len, MRMON_RANGE_SNAPSHOT);
}

/* After WATCH, as a cache does: register the watched ranges with `r`
 * (one fixed buffer each, which pins them), then re-check every word. */
static void pin_on(struct io_uring *r, const struct watch *w, int n)
{
	struct iovec iov[4];

	for (int i = 0; i < n; i++)
		iov[i] = (struct iovec){ w[i].p, w[i].len };
	CHECK_EQ(io_uring_register_buffers(r, iov, (unsigned int)n), 0);
	for (int i = 0; i < n; i++)
		CHECK(mon_valid(&m, w[i].slot, w[i].e));
}

static void pin(const struct watch *w, int n)
{
	pin_on(&ring, w, n);
}

static void unpin(void)
{
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0);
}

/* REVALIDATE; returns what came back (0 on an ioctl error, checked). */
static uint64_t revalidate(struct watch w)
{
	uint64_t e = w.e;

	CHECK_EQ(mon_revalidate(&m, w.slot, &e), 0);
	return e;
}

/* A 2 MiB-aligned block of 4 KiB pages, all present, in a mapping twice
 * its size (so the VMA covers the whole window). */
static char *map_block(void **raw)
{
	char *r = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	CHECK(r != MAP_FAILED);
	if (r == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)r + HUGE - 1) & ~(HUGE - 1));
	madvise(r, 2 * HUGE, MADV_NOHUGEPAGE);
	memset(p, 1, HUGE);
	*raw = r;
	return p;
}

/* The last event of this slot in the queue now, drained. */
static struct mrmon_event last_event(uint32_t slot)
{
	struct mrmon_event ev[64], last = { 0 };
	int n = mon_events(&m, ev, 64);

	for (int i = 0; i < n; i++)
		if (ev[i].slot == slot)
			last = ev[i];
	return last;
}

static uint64_t pfn_of(const void *addr)
{
	uint64_t e = 0;

	if (pagemap < 0 || pread(pagemap, &e, sizeof(e),
				 (off_t)((uintptr_t)addr / PAGE * sizeof(e))) != sizeof(e))
		return 0;
	return e >> 63 ? e & ((1ull << 55) - 1) : 0;
}

static void outcome_split(void)
{
	void *raw;
	char *p = map_block(&raw);
	uint64_t rev = m.hdr->revalidations, e1, e, ectl;
	struct mrmon_event ev;
	struct watch w, ctl;

	if (!p)
		return;
	w = watch(p + 10 * PAGE, 4 * PAGE);
	ctl = watch(p + 20 * PAGE, 4 * PAGE);
	pin(&w, 1);
	CHECK_EQ(revalidate(w), w.e);				/* valid: the same */
	CHECK_EQ(revalidate(ctl), ctl.e);			/* unpinned too */
	CHECK_EQ(m.hdr->revalidations, rev);
	CHECK_EQ(mprotect(p + 100 * PAGE, PAGE, PROT_READ), 0);
	if (!thp) {
		printf("split, THP not configured: both words still valid\n");
		CHECK(mon_valid(&m, w.slot, w.e) && mon_valid(&m, ctl.slot, ctl.e));
		CHECK_EQ(mon_unwatch(&m, w.slot, w.e), 0);
		CHECK_EQ(mon_unwatch(&m, ctl.slot, ctl.e), 0);
		unpin();
		munmap(raw, 2 * HUGE);
		return;
	}
	CHECK(!mon_valid(&m, w.slot, w.e));
	CHECK(!mon_valid(&m, ctl.slot, ctl.e));
	ev = last_event(w.slot);
	CHECK_EQ(ev.cause, MRMON_CAUSE_CLEAR);
	CHECK_EQ(ev.generation, w.e >> 1);
	e1 = revalidate(w);
	ectl = revalidate(ctl);
	printf("split: word %#llx -> REVALIDATE %#llx; unpinned, the same split: %#llx -> %#llx\n",
	       (unsigned long long)w.e, (unsigned long long)e1, (unsigned long long)ctl.e,
	       (unsigned long long)ectl);
	CHECK(e1 & MRMON_WORD_VALID);
	CHECK(e1 >> 1 > w.e >> 1);
	CHECK(mon_valid(&m, w.slot, e1));
	CHECK_EQ(ectl, 0);					/* the control */
	CHECK(!mon_valid(&m, ctl.slot, ctl.e));
	CHECK_EQ(mon_unwatch(&m, ctl.slot, ctl.e), 0);
	CHECK_EQ(m.hdr->revalidations, rev + 1);
	e = e1;
	CHECK_EQ(mon_revalidate(&m, w.slot, &e), 0);		/* valid now: the same */
	CHECK_EQ(e, e1);
	CHECK_EQ(m.hdr->revalidations, rev + 1);
	e = w.e;
	CHECK_EQ(mon_revalidate(&m, w.slot, &e), -ESTALE);	/* the old generation */
	CHECK_EQ(mon_unwatch(&m, w.slot, w.e), -ESTALE);
	CHECK(mon_valid(&m, w.slot, e1));			/* untouched by both */
	/* Events of the re-armed watch carry its new generation. */
	CHECK_EQ(munmap(p + 12 * PAGE, PAGE), 0);
	CHECK_EQ(__atomic_load_n(&m.words[w.slot], __ATOMIC_ACQUIRE), e1 & ~MRMON_WORD_VALID);
	ev = last_event(w.slot);
	CHECK_EQ(ev.generation, e1 >> 1);
	CHECK_EQ(ev.cause, MRMON_CAUSE_UNMAP);
	w.e = e1;
	CHECK_EQ(revalidate(w), 0);				/* UNMAP: never again */
	CHECK_EQ(m.hdr->revalidations, rev + 1);
	CHECK_EQ(mon_unwatch(&m, w.slot, e1), 0);
	unpin();
	munmap(raw, 2 * HUGE);
}

static void print_outcome(const char *what, uint64_t e, int rearm)
{
	printf("%-36s REVALIDATE %s%s\n", what, e ? "re-armed" : "0",
	       (e != 0) == rearm ? "" : "   <-- WRONG");
}

/* The watch was invalidated; REVALIDATE gives 0, counts nothing, and
 * leaves the generation: UNWATCH with it works. */
static void expect_zero(const char *what, struct watch w)
{
	uint64_t rev = m.hdr->revalidations, e;

	CHECK(!mon_valid(&m, w.slot, w.e));
	e = revalidate(w);
	print_outcome(what, e, 0);
	CHECK_EQ(e, 0);
	CHECK_EQ(m.hdr->revalidations, rev);
	CHECK(!mon_valid(&m, w.slot, w.e));
	CHECK_EQ(mon_unwatch(&m, w.slot, w.e), 0);
}

/* The watch was invalidated; REVALIDATE re-arms it. */
static void expect_rearmed(const char *what, struct watch w)
{
	uint64_t e;

	CHECK(!mon_valid(&m, w.slot, w.e));
	e = revalidate(w);
	print_outcome(what, e, 1);
	CHECK(e && mon_valid(&m, w.slot, e));
	CHECK_EQ(mon_unwatch(&m, w.slot, e ? e : w.e), 0);
}

static void outcome_zap(void)
{
	void *raw;
	char *p = map_block(&raw);
	struct watch w[2], ctl, unp;
	uint64_t pfn;

	if (!p)
		return;
	w[0] = watch(p + 10 * PAGE, PAGE);
	ctl = watch(p + 20 * PAGE, PAGE);
	pin(w, 1);
	madvise(p + 10 * PAGE, PAGE, MADV_DONTNEED);
	expect_zero("MADV_DONTNEED, not touched", w[0]);
	/* ctl saw no CLEAR (a zap splits nothing here): still valid. */
	CHECK(mon_valid(&m, ctl.slot, ctl.e));
	CHECK_EQ(revalidate(ctl), ctl.e);
	CHECK_EQ(mon_unwatch(&m, ctl.slot, ctl.e), 0);
	unpin();

	w[0] = watch(p + 30 * PAGE, PAGE);
	w[1] = watch(p + 40 * PAGE, PAGE);
	unp = watch(p + 50 * PAGE, PAGE);
	pin(w, 2);
	pfn = pfn_of(p + 30 * PAGE);
	madvise(p + 30 * PAGE, PAGE, MADV_DONTNEED);
	p[30 * PAGE] = 2;
	CHECK(!pfn || pfn != pfn_of(p + 30 * PAGE));	/* the pin holds the old */
	/* The split that follows must not hide the replaced page. */
	CHECK_EQ(mprotect(p + 100 * PAGE, PAGE, PROT_READ), 0);
	expect_zero("MADV_DONTNEED, touched", w[0]);
	if (thp) {
		expect_rearmed("  control: its neighbour, split only", w[1]);
		expect_zero("  control: split only, unpinned", unp);
	} else {
		CHECK(mon_valid(&m, w[1].slot, w[1].e) && mon_valid(&m, unp.slot, unp.e));
		CHECK_EQ(mon_unwatch(&m, w[1].slot, w[1].e), 0);
		CHECK_EQ(mon_unwatch(&m, unp.slot, unp.e), 0);
	}
	unpin();
	munmap(raw, 2 * HUGE);
}

/* Unpinned, the page MADV_DONTNEED frees is often the next one the touch
 * gets, so the mapping holds the same PFN again; but nothing kept the
 * page from being anyone's in between, and REVALIDATE must give 0. */
static void outcome_unpinned_reuse(void)
{
	int same = 0, rearmed = 0, n = 64;
	uint64_t rev = m.hdr->revalidations;
	void *raw;
	char *p = map_block(&raw);

	if (!p)
		return;
	for (int i = 0; i < n; i++) {
		char *q = p + (200 + i) * PAGE;
		struct watch w = watch(q, PAGE);
		uint64_t before = pfn_of(q), e;

		madvise(q, PAGE, MADV_DONTNEED);
		q[0] = 3;
		e = revalidate(w);
		same += before && pfn_of(q) == before;
		rearmed += e != 0;
		CHECK_EQ(mon_unwatch(&m, w.slot, e ? e : w.e), 0);
	}
	if (pagemap < 0 || !pfn_of(p))
		printf("unpinned MADV_DONTNEED then touch, %d times: re-armed %d times (no PFNs "
		       "in pagemap)\n", n, rearmed);
	else
		printf("unpinned MADV_DONTNEED then touch, %d times: the same PFN came back %d "
		       "times, re-armed %d times\n", n, same, rearmed);
	CHECK_EQ(rearmed, 0);
	CHECK_EQ(m.hdr->revalidations, rev);
	munmap(raw, 2 * HUGE);
}

/*
 * One round of the misuse (the top of the file) on page q, with `decoy`
 * to take the freed X while the touch of q faults Y in.  Returns 0 if
 * REVALIDATE gave 0 with X back under q (then the control: X pinned too,
 * re-armed), 1 if it re-armed; inconclusive: -1 if X never came back, -2
 * if the touch got X itself (the decoy did not take it); *tries:
 * DONTNEED-and-touch rounds it took.
 */
static int misuse_round(struct io_uring *ring2, char *q, char *decoy, int *tries)
{
	struct iovec iov = { q, PAGE };
	uint64_t x, e = 0;
	struct watch w;
	int ret = -1;

	madvise(decoy, PAGE, MADV_DONTNEED);	/* absent: its touch takes X */
	x = pfn_of(q);
	w = watch(q, PAGE);			/* fingerprints X */
	madvise(q, PAGE, MADV_DONTNEED);	/* X freed */
	decoy[0] = 1;
	q[0] = 2;				/* Y */
	*tries = 0;
	if (!x || pfn_of(q) == x) {
		CHECK_EQ(mon_unwatch(&m, w.slot, w.e), 0);
		return -2;
	}
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0);
	/* The re-check would say invalid: ignored, on purpose. */
	CHECK(!mon_valid(&m, w.slot, w.e));
	while (pfn_of(q) != x && *tries < MISUSE_TRIES) {
		/* Unmapped, Y stays pinned; the page freed last, which
		 * the touch takes, is X from the decoy the first time,
		 * then what the last touch got. */
		madvise(q, PAGE, MADV_DONTNEED);
		if (!(*tries)++)
			madvise(decoy, PAGE, MADV_DONTNEED);
		q[0] = 3;
	}
	if (pfn_of(q) == x) {
		e = revalidate(w);
		ret = e != 0;
	}
	if (!ret) {
		/* Control: the fingerprint does match; the pin was all
		 * REVALIDATE missed. */
		CHECK_EQ(io_uring_register_buffers(ring2, &iov, 1), 0);
		e = revalidate(w);
		CHECK(e && mon_valid(&m, w.slot, e));
		CHECK_EQ(io_uring_unregister_buffers(ring2), 0);
	}
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0);
	CHECK_EQ(mon_unwatch(&m, w.slot, e ? e : w.e), 0);
	return ret;
}

/* The misuse, MISUSE_ROUNDS times on one CPU (its free-page list is the
 * one the faults take from). */
static void misuse(void)
{
	int zeros = 0, rearmed = 0, never = 0, got_x = 0, tries, sum = 0;
	struct io_uring ring2;
	cpu_set_t all, one;
	void *raw;
	char *p;

	p = map_block(&raw);
	if (!p)
		return;
	if (pagemap < 0 || !pfn_of(p)) {
		printf("misuse: no PFNs in pagemap, skipped\n");
		munmap(raw, 2 * HUGE);
		return;
	}
	CHECK_EQ(io_uring_queue_init(4, &ring2, 0), 0);
	CHECK_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	CHECK_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	for (int i = 0; i < MISUSE_ROUNDS; i++) {
		int r = misuse_round(&ring2, p + (300 + i) * PAGE, p + (400 + i) * PAGE, &tries);

		zeros += r == 0;
		rearmed += r == 1;
		never += r == -1;
		got_x += r == -2;
		sum += r >= 0 ? tries : 0;
	}
	CHECK_EQ(sched_setaffinity(0, sizeof(all), &all), 0);
	printf("misuse (X fingerprinted, Y registered, X back): %d rounds, X came back in %d "
	       "(%.1f DONTNEED-and-touch each): REVALIDATE 0 in %d, re-armed in %d; "
	       "inconclusive: X never came back in %d (%d tries each), the touch got X itself "
	       "in %d\n", MISUSE_ROUNDS, zeros + rearmed,
	       zeros + rearmed ? (double)sum / (zeros + rearmed) : 0.0, zeros, rearmed, never,
	       MISUSE_TRIES, got_x);
	CHECK_EQ(rearmed, 0);
	CHECK(zeros + rearmed > 0);	/* the case was reached at least once */
	io_uring_queue_exit(&ring2);
	munmap(raw, 2 * HUGE);
}

static void outcome_remap(void)
{
	char *p = mon_map_anon(PAGE);
	uint64_t pfn = pfn_of(p);
	struct watch w = watch(p, PAGE);

	CHECK_EQ(munmap(p, PAGE), 0);
	CHECK(mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		   -1, 0) == p);
	p[0] = 1;
	printf("munmap, mmap at the same address: %s PFN\n",
	       pfn && pfn == pfn_of(p) ? "the same" : "another");
	expect_zero("munmap, mmap at the same address", w);
	munmap(p, PAGE);
}

static void outcome_split_zero(void)
{
	struct mrmon_unwatch_entry u[3];
	struct mrmon_batch b = { .entries = (uintptr_t)u, .count = 3 };
	struct watch w[3];
	void *raw;
	char *p;

	if (!thp) {
		printf("split outcomes without SNAPSHOT / not present: THP not configured, skipped\n");
		return;
	}
	p = map_block(&raw);
	if (!p)
		return;
	w[0] = watch_flags(p + 10 * PAGE, PAGE, 0);
	w[1] = watch(p + 20 * PAGE, PAGE);
	pin(w, 2);
	CHECK_EQ(mprotect(p + 100 * PAGE, PAGE, PROT_READ), 0);
	expect_zero("split, watched without SNAPSHOT", w[0]);
	expect_rearmed("  control: SNAPSHOT, same window", w[1]);
	unpin();
	/* A new window: the split left no VMA covering this one, and a
	 * split only CLEARs the window of a VMA that covers it. */
	munmap(raw, 2 * HUGE);
	p = map_block(&raw);
	if (!p)
		return;

	/* Not present at WATCH (all, or one page of two), present later:
	 * the registration faults them in, and pins them. */
	madvise(p + 30 * PAGE, 2 * PAGE, MADV_DONTNEED);
	madvise(p + 41 * PAGE, PAGE, MADV_DONTNEED);
	w[0] = watch(p + 30 * PAGE, 2 * PAGE);
	w[1] = watch(p + 40 * PAGE, 2 * PAGE);
	w[2] = watch(p + 50 * PAGE, 2 * PAGE);
	pin(w, 3);
	CHECK(pfn_of(p + 30 * PAGE) || pagemap < 0);
	CHECK_EQ(mprotect(p + 100 * PAGE, PAGE, PROT_READ), 0);
	for (int i = 0; i < 3; i++) {
		CHECK(!mon_valid(&m, w[i].slot, w[i].e));
		u[i] = (struct mrmon_unwatch_entry){ .slot = w[i].slot, .expected = w[i].e };
	}
	/* One batch: each entry's answer is written back. */
	CHECK_EQ(mon_ioctl(m.fd, MRMON_IOC_REVALIDATE, &b), 0);
	CHECK_EQ(b.done, 3);
	print_outcome("pages not present at WATCH", u[0].expected, 0);
	print_outcome("one page of two not present", u[1].expected, 0);
	print_outcome("  control: present, same window", u[2].expected, 1);
	CHECK_EQ(u[0].expected, 0);
	CHECK_EQ(u[1].expected, 0);
	CHECK(u[2].expected && mon_valid(&m, w[2].slot, u[2].expected));
	CHECK_EQ(mon_unwatch(&m, w[0].slot, w[0].e), 0);
	CHECK_EQ(mon_unwatch(&m, w[1].slot, w[1].e), 0);
	CHECK_EQ(mon_unwatch(&m, w[2].slot, u[2].expected), 0);
	unpin();
	munmap(raw, 2 * HUGE);
}

/* The race. */
struct race {
	char *p;		/* RACE_PAGES pages, watched and registered */
	char *window;		/* the 2 MiB window around it */
	int memfd;
	pthread_mutex_t lock;	/* the mutator holds it for each change */
	int stop;
	struct watch w;
	long revalidates, rearmed, same, zeros, raced, checks, mismatches;
	long reregs, rereg_retries, rereg_locked, replaced, splits, writes;
};

/* Registration and mapping differ in how many pages?  -1 on an error. */
static int pin_differs(struct race *r)
{
	static char buf[RACE_PAGES * PAGE];
	size_t len = RACE_PAGES * PAGE;
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	int n = 0, res;

	if (!sqe)
		return -1;
	io_uring_prep_write_fixed(sqe, r->memfd, r->p, len, 0, 0);
	if (io_uring_submit_and_wait(&ring, 1) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return -1;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	if (res != (int)len || pread(r->memfd, buf, len, 0) != (ssize_t)len)
		return -1;
	for (int i = 0; i < RACE_PAGES; i++)
		n += memcmp(buf + i * PAGE, r->p + i * PAGE, PAGE) != 0;
	return n;
}

/* Watch, register, re-check, until the re-check sees the word valid;
 * racing the mutator, then (after 50 tries) with it held off. */
static void race_register(struct race *r)
{
	struct iovec iov = { r->p, RACE_PAGES * PAGE };
	int locked = 0;

	for (int tries = 0;; tries++) {
		if (tries == 50) {
			pthread_mutex_lock(&r->lock);
			locked = 1;
		}
		r->w = watch(r->p, RACE_PAGES * PAGE);
		CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0);
		if (mon_valid(&m, r->w.slot, r->w.e) || tries > 50)
			break;
		r->rereg_retries++;
		CHECK_EQ(io_uring_unregister_buffers(&ring), 0);
		CHECK_EQ(mon_unwatch(&m, r->w.slot, r->w.e), 0);
	}
	CHECK(mon_valid(&m, r->w.slot, r->w.e));
	r->reregs++;
	r->rereg_locked += locked;
	if (locked)
		pthread_mutex_unlock(&r->lock);
}

static void race_unregister(struct race *r)
{
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0);
	CHECK_EQ(mon_unwatch(&m, r->w.slot, r->w.e), 0);
}

static void *race_mutator(void *arg)
{
	struct race *r = arg;
	unsigned int seed = 12345;
	int exec_page = -1, ro_outside = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		unsigned int k = (unsigned int)rand_r(&seed) % 8;
		int i = rand_r(&seed) % RACE_PAGES;

		pthread_mutex_lock(&r->lock);
		if (k == 0) {
			/* A new page: the registration goes stale. */
			madvise(r->p + i * PAGE, PAGE, MADV_DONTNEED);
			memset(r->p + i * PAGE, (char)rand_r(&seed), PAGE);
			r->replaced++;
		} else if (k <= 3) {
			/* Split inside the range (PROT_EXEC keeps it
			 * writable), or merge it back. */
			if (exec_page < 0) {
				exec_page = i;
				mprotect(r->p + i * PAGE, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC);
			} else {
				mprotect(r->p + exec_page * PAGE, PAGE, PROT_READ | PROT_WRITE);
				exec_page = -1;
			}
			r->splits++;
		} else if (k <= 5) {
			/* Split 1 MiB away, in the same window. */
			ro_outside = !ro_outside;
			mprotect(r->window + HUGE / 2, PAGE,
				 ro_outside ? PROT_READ : PROT_READ | PROT_WRITE);
			r->splits++;
		} else {
			/* New data in the same page: both views see it. */
			memset(r->p + i * PAGE, (char)rand_r(&seed), PAGE);
			r->writes++;
		}
		pthread_mutex_unlock(&r->lock);
		usleep((useconds_t)(rand_r(&seed) % 300));
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void race_check(struct race *r, double seconds)
{
	double end = now_s() + seconds;
	pthread_t t;

	CHECK_EQ(pthread_create(&t, NULL, race_mutator, r), 0);
	while (now_s() < end) {
		uint64_t e = revalidate(r->w);

		r->revalidates++;
		if (!e) {
			r->zeros++;
			race_unregister(r);
			race_register(r);
			continue;
		}
		if (e == r->w.e)
			r->same++;
		else
			r->rearmed++;
		r->w.e = e;
		pthread_mutex_lock(&r->lock);
		if (mon_valid(&m, r->w.slot, e)) {
			int d = pin_differs(r);

			r->checks++;
			if (d && r->mismatches++ < 10)
				fprintf(stderr, "race: word %#llx valid but %d pages of the "
					"registration differ from the mapping\n",
					(unsigned long long)e, d);
		} else {
			r->raced++;
		}
		pthread_mutex_unlock(&r->lock);
	}
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
}

static void race(void)
{
	const char *env = getenv("MRMON_RACE_SECONDS");
	double seconds = env ? atof(env) : 3.0;
	struct race r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	void *raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int d;

	CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		return;
	r.window = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	r.p = r.window + 64 * PAGE;
	memset(r.window, 9, HUGE);
	r.memfd = (int)syscall(SYS_memfd_create, "race", 0);
	CHECK(r.memfd >= 0 && ftruncate(r.memfd, RACE_PAGES * PAGE) == 0);
	race_register(&r);
	CHECK_EQ(pin_differs(&r), 0);

	/* Control: a page replaced on purpose shows through the pin, and
	 * the module saw it. */
	madvise(r.p + 5 * PAGE, PAGE, MADV_DONTNEED);
	memset(r.p + 5 * PAGE, 0x5a, PAGE);
	d = pin_differs(&r);
	CHECK_EQ(d, 1);
	CHECK(!mon_valid(&m, r.w.slot, r.w.e));
	CHECK_EQ(revalidate(r.w), 0);
	printf("race control: a replaced page differs through the pin (%d page), its word "
	       "invalid, REVALIDATE 0\n", d);
	race_unregister(&r);
	race_register(&r);
	r.reregs = r.rereg_retries = r.rereg_locked = 0;

	race_check(&r, seconds);
	printf("race, %.1f s: %ld REVALIDATEs (%ld re-armed, %ld same, %ld 0 then re-registered "
	       "with %ld retries, %ld held off), %ld pin checks with the word valid, %ld raced, "
	       "%ld mismatches; mutator: %ld pages replaced, %ld splits, %ld writes\n",
	       seconds, r.revalidates, r.rearmed, r.same, r.zeros, r.rereg_retries, r.rereg_locked,
	       r.checks, r.raced, r.mismatches, r.replaced, r.splits, r.writes);
	CHECK_EQ(r.mismatches, 0);
	CHECK(r.checks > 0);
	CHECK(r.rearmed > 0 || !thp);	/* REVALIDATE did race with the splits */
	CHECK(r.zeros > 0);	/* and caught replaced pages */
	race_unregister(&r);
	close(r.memfd);
	munmap(raw, 2 * HUGE);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (io_uring_queue_init(8, &ring, 0))
		SKIP("io_uring unavailable");
	CHECK_EQ(mon_open(&m, 256, 1024), 0);
	CHECK(m.hs.features & MRMON_FEATURE_REVALIDATE);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	thp = mon_have_thp();
	outcome_split();
	outcome_zap();
	outcome_unpinned_reuse();
	misuse();
	outcome_remap();
	outcome_split_zero();
	race();
	printf("revalidations counted: %llu\n", (unsigned long long)m.hdr->revalidations);
	mon_close(&m);
	io_uring_queue_exit(&ring);
	return test_result();
}
