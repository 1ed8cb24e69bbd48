/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-unwatch-race: an munmap that runs while another thread is
 * inside UNWATCH of the same range cannot return while the word still
 * reads valid.
 *
 * Regression test for issue 13, defect 3: on 1682920 UNWATCH removed the
 * interval notifier first and cleared the word after.  While an
 * invalidation of the mm is in progress, mmu_interval_notifier_remove()
 * only queues the removal, done when that invalidation ends, and sleeps
 * until then; an munmap starting in between got no callback and returned
 * with the word still valid.
 *
 * Each round, thread D (main) runs a long MADV_DONTNEED of another range,
 * R, which a second descriptor watches 65,534 times; thread U
 * UNWATCHes the watch of page P as soon as the first of R's callbacks has
 * run (a sentinel watch that starts below R is visited first); thread M
 * waits until U sleeps in the kernel, then munmaps P, which waits for D's
 * mmap_lock and so starts just after D's invalidation ends; right after
 * munmap returns it loads P's word and then U's "UNWATCH returned" flag.
 * A word still valid with the flag unset is the bug.  To make the window
 * as wide as a preempted thread's, U is moved, while it sleeps, to D's
 * CPU, where D runs SCHED_FIFO and keeps the CPU until M is done.  A round
 * counted only if U was seen asleep before M's munmap was issued and D had
 * not finished.  Control: munmap of an unwatched page leaves a watched
 * word valid, and the check reads it so.
 *
 * ABI 3 (issue 24): UNWATCH takes only the descriptor's spinlock and never
 * sleeps, and an invalidation frees the watches it clears, so the load is
 * made again each round (LOAD_WATCHES watches, its events read first).
 * U must never be seen asleep in UNWATCH, and the word never valid after
 * munmap returned; UNWATCH answers 0, or -ESTALE when M's munmap freed the
 * watch first.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include "mrmon_test.h"
#include "mrmon_priv.h"

#define ROUNDS		200
#define BUDGET_S	3.0
#define LOAD_SLOTS	65536u	/* the default max_slots */
#define LOAD_WATCHES	4096	/* made again each round */

struct race {
	struct mon subject, load;
	char *load_range;		/* R - PAGE: the sentinel's page, then R */
	int cpu_d, cpu_um;
	int u_tid;
	/* Per round, written by D before it bumps `round`. */
	char *page;
	uint32_t slot, sentinel_slot;
	uint64_t expected, sentinel_expected;
	/* Flags of the round; atomics. */
	int round, d_done, u_calling, u_returned, u_round_done, m_done;
	int valid, hit, u_rc;
};

static void pin(pid_t tid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(tid, sizeof(set), &set), 0);
}

static void policy(int pol, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	CHECK_EQ(sched_setscheduler(0, pol, &sp), 0);
}

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* Waits for the next round; returns it, or 0 to stop. */
static int round_wait(struct race *r, int last)
{
	int n;

	while ((n = load(&r->round)) == last)
		sched_yield();
	return n > 0 ? n : 0;
}

/* The state letter of thread `tid` (R, S, D...), or 0. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

static void *thread_u(void *arg)
{
	struct race *r = arg;
	const uint64_t *sentinel;
	int n = 0;

	store(&r->u_tid, (int)syscall(SYS_gettid));
	pin(0, r->cpu_um);
	while ((n = round_wait(r, n))) {
		sentinel = &r->load.words[r->sentinel_slot];
		/* D's invalidation has begun once the sentinel is clear. */
		while (__atomic_load_n(sentinel, __ATOMIC_ACQUIRE) == r->sentinel_expected &&
		       !load(&r->d_done))
			;
		store(&r->u_calling, 1);
		r->u_rc = mon_unwatch(&r->subject, r->slot, r->expected);
		store(&r->u_returned, 1);
		pin(0, r->cpu_um);
		store(&r->u_round_done, 1);
	}
	return NULL;
}

static void *thread_m(void *arg)
{
	struct race *r = arg;
	int n = 0, asleep;
	uint64_t word;

	pin(0, r->cpu_um);
	while ((n = round_wait(r, n))) {
		while (!load(&r->u_calling))
			sched_yield();
		asleep = 0;
		/* Yields: U shares this CPU until it sleeps. */
		while (!asleep && !load(&r->u_returned) && !load(&r->d_done)) {
			asleep = thread_state(r->u_tid) == 'D';
			sched_yield();
		}
		if (asleep)
			pin(r->u_tid, r->cpu_d);
		store(&r->valid, asleep && !load(&r->d_done));
		munmap(r->page, PAGE);
		word = __atomic_load_n(&r->subject.words[r->slot], __ATOMIC_ACQUIRE);
		store(&r->hit, word == r->expected && !load(&r->u_returned));
		store(&r->m_done, 1);
	}
	return NULL;
}

static void load_make(struct race *r);

/* One round, run by D; returns 1 if the bug was seen, *valid set. */
static int race_round(struct race *r, int n, int *valid, double *t_inval)
{
	double t0;

	struct mrmon_event ev[16];

	while (mon_events(&r->subject, ev, 16) > 0)	/* gives the slots back */
		;
	r->page = mon_map_anon(PAGE);
	CHECK(r->page != NULL);
	CHECK_EQ(mon_watch(&r->subject, r->page, PAGE, n, &r->slot, &r->expected), 0);
	/* The last round's DONTNEED freed the sentinel and the load. */
	load_make(r);
	store(&r->d_done, 0);
	store(&r->u_calling, 0);
	store(&r->u_returned, 0);
	store(&r->u_round_done, 0);
	store(&r->m_done, 0);
	store(&r->round, n);
	t0 = priv_now();
	madvise(r->load_range + PAGE, PAGE, MADV_DONTNEED);
	*t_inval += priv_now() - t0;
	store(&r->d_done, 1);
	/* Keep this CPU, where U wakes up, busy until M has looked. */
	while (!load(&r->m_done) && priv_now() - t0 < 0.5)
		;
	while (!load(&r->m_done) || !load(&r->u_round_done))
		usleep(100);
	CHECK(r->u_rc == 0 || r->u_rc == -ESTALE);
	*valid = load(&r->valid);
	return load(&r->hit);
}

/* Control: munmap of another page leaves a watch intact, and the check
 * that finds the bug reads that word as valid. */
static void control(struct race *r)
{
	char *p = mon_map_anon(2 * PAGE);
	uint32_t slot = 0;
	uint64_t e = 0;

	CHECK(p != NULL);
	CHECK_EQ(mon_watch(&r->subject, p, PAGE, 0, &slot, &e), 0);
	munmap(p + PAGE, PAGE);
	CHECK(__atomic_load_n(&r->subject.words[slot], __ATOMIC_ACQUIRE) == e);
	munmap(p, PAGE);
	CHECK(!mon_valid(&r->subject, slot, e));
	CHECK_EQ(mon_unwatch(&r->subject, slot, e), -ESTALE);	/* freed by the munmap */
}

/* The load: LOAD_WATCHES watches of R, so D's MADV_DONTNEED of it runs
 * that many callbacks. */
static void load_make(struct race *r)
{
	static struct mrmon_range e[1024];
	struct mrmon_event ev[64];
	uint32_t n = 0;

	/* The freed watches' slots come back as their events are read. */
	while (mon_events(&r->load, ev, 64) > 0)
		;
	if (!r->load_range)
		r->load_range = mon_map_anon(2 * PAGE);
	CHECK(r->load_range != NULL);
	CHECK_EQ(mon_watch(&r->load, r->load_range, 2 * PAGE, 0, &r->sentinel_slot,
			   &r->sentinel_expected), 0);
	while (n < LOAD_WATCHES) {
		struct mrmon_batch b = { .entries = (uintptr_t)e };

		b.count = r->load.hs.max_batch < 1024 ? r->load.hs.max_batch : 1024;
		if (b.count > LOAD_WATCHES - n)
			b.count = LOAD_WATCHES - n;
		for (uint32_t i = 0; i < b.count; i++)
			e[i] = (struct mrmon_range){ .start = (uintptr_t)r->load_range + PAGE,
						     .len = PAGE, .cookie = n + i };
		CHECK_EQ(mon_ioctl(r->load.fd, MRMON_IOC_WATCH, &b), 0);
		if (b.done < b.count)
			break;
		n += b.count;
	}
}

int main(void)
{
	static struct race r;
	pthread_t u, m;
	int hits = 0, valid = 0, n, v;
	double t0, t_inval = 0;
	cpu_set_t set;
	int cpus[2], k = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[k++] = c;
	if (k < 2)
		SKIP("needs two CPUs");
	if (geteuid() != 0)
		SKIP("needs root (SCHED_FIFO)");
	r.cpu_d = cpus[0];
	r.cpu_um = cpus[1];
	CHECK_EQ(mon_open(&r.subject, 16, 16), 0);
	CHECK_EQ(mon_open(&r.load, LOAD_SLOTS, 1), 0);
	control(&r);
	pin(0, r.cpu_d);
	CHECK_EQ(pthread_create(&u, NULL, thread_u, &r), 0);
	CHECK_EQ(pthread_create(&m, NULL, thread_m, &r), 0);
	while (!load(&r.u_tid))
		sched_yield();

	policy(SCHED_FIFO, 1);
	t0 = priv_now();
	for (n = 1; n <= ROUNDS && priv_now() - t0 < BUDGET_S; n++) {
		hits += race_round(&r, n, &v, &t_inval);
		valid += v;
	}
	n--;
	policy(SCHED_OTHER, 0);
	store(&r.round, -1);
	pthread_join(u, NULL);
	pthread_join(m, NULL);
	printf("%d rounds in %.1f s (MADV_DONTNEED over %u watches: %.1f ms on average); "
	       "UNWATCH seen asleep before the munmap in %d; word still valid after munmap "
	       "returned, UNWATCH not returned: %d of %d\n", n, priv_now() - t0, LOAD_WATCHES,
	       t_inval / n * 1e3, valid, hits, valid);
	CHECK_EQ(valid, 0);	/* ABI 3: UNWATCH never sleeps */
	CHECK_EQ(hits, 0);
	mon_close(&r.subject);
	mon_close(&r.load);
	return test_result();
}
