/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-inflight - a WATCH is refused ("not armed") only by an
 * invalidation that overlaps its range, not by unrelated ones that happen
 * to be in flight at the same time.
 *
 * Before, the module kept one count of the invalidations in flight and the
 * union of their ranges, which only widens until the count returns to 0
 * (as KVM's).  Two threads invalidating below and above a range, with
 * their calls overlapping in time, then kept a WATCH of the untouched range
 * between them "not armed" for as long as they went on, and the library
 * spins on that under cache->lock (docs/protocol.md, "What the model leaves
 * open").  Here one thread zaps a large populated range below the watched
 * page (one invalidation of 1 GiB, long), another zaps one page above it in a loop, and
 * the main thread watches and unwatches the page between them: no WATCH
 * may come back not armed.  The control: a WATCH of a page inside the
 * zapped range must come back not armed at least once (the invalidations
 * really were in flight while the main thread watched).
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include "mrmon_test.h"

#define LOW_LEN (1ul << 30)	/* the long invalidation's range */
/* At least RUN_S seconds and MIN_ZAPS long zaps (the first populate of
 * 1 GiB also builds its page tables: slow under TCG), at most MAX_S. */
#define RUN_S 3.0
#define MIN_ZAPS 4
#define MAX_S 60.0

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

static char *low, *mid, *high;
static volatile int stop;
static unsigned long low_zaps, high_zaps;	/* atomic */

/* The long invalidation runs on CPU 0; the other thread and the watcher
 * share CPU 1, so its one-page zaps start while the long one is in flight
 * and the watcher's WATCH runs right after them. */
static void on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *zap_low(void *arg)
{
	(void)arg;
	on_cpu(0);
	while (!stop) {
		/* Map the zero page everywhere (quick: nothing to clear), then
		 * zap: one invalidation of the whole 1 GiB, 262,144 entries
		 * long, that overlaps many of the other thread's. */
		if (madvise(low, LOW_LEN, MADV_POPULATE_READ))
			for (size_t i = 0; i < LOW_LEN; i += PAGE)
				(void)*(volatile char *)(low + i);
		madvise(low, LOW_LEN, MADV_DONTNEED);
		__atomic_fetch_add(&low_zaps, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *zap_high(void *arg)
{
	(void)arg;
	on_cpu(1);
	while (!stop) {
		high[0] = 1;
		madvise(high, PAGE, MADV_DONTNEED);
		__atomic_fetch_add(&high_zaps, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Watches of [addr, +PAGE) until the time is up: how many were not armed. */
static int watch_loop(struct mon *m, char *addr, unsigned long *tries, unsigned long *refused)
{
	double t0 = priv_now();

	*tries = *refused = 0;
	while (priv_now() < t0 + MAX_S &&
	       (priv_now() < t0 + RUN_S ||
		__atomic_load_n(&low_zaps, __ATOMIC_RELAXED) < MIN_ZAPS)) {
		uint32_t slot;
		uint64_t expected;
		int rc = mon_watch(m, addr, PAGE, 1, &slot, &expected);

		if (rc)
			return rc;
		++*tries;
		if (!expected) {
			++*refused;
			continue;
		}
		rc = mon_unwatch(m, slot, expected);
		if (rc && rc != -ESTALE)
			return rc;
	}
	return 0;
}

static int run(struct mon *m, char *target, unsigned long *tries, unsigned long *refused)
{
	pthread_t t[2];
	int rc;

	stop = 0;
	on_cpu(1);
	if (pthread_create(&t[0], NULL, zap_low, NULL) ||
	    pthread_create(&t[1], NULL, zap_high, NULL))
		return -EAGAIN;
	rc = watch_loop(m, target, tries, refused);
	stop = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	return rc;
}

int main(void)
{
	unsigned long tries, refused, ctl_tries, ctl_refused;
	struct mon m;
	char *area;
	int rc;

	/* One reservation, so the three ranges sit in this order:
	 * [low: 1 GiB][guard][mid][guard][high]. */
	area = mmap(NULL, LOW_LEN + 4 * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(area != MAP_FAILED);	/* NORESERVE: more than the guest's RAM */
	if (area == MAP_FAILED)
		return test_result();
	low = area;
	/* 4 KiB entries: the huge zero page would make the zap 512 entries
	 * short (fails with EINVAL where there is no THP: nothing to do). */
	madvise(low, LOW_LEN, MADV_NOHUGEPAGE);
	mid = area + LOW_LEN + PAGE;
	high = area + LOW_LEN + 3 * PAGE;
	CHECK(!mprotect(area + LOW_LEN, PAGE, PROT_NONE));
	CHECK(!mprotect(area + LOW_LEN + 2 * PAGE, PAGE, PROT_NONE));
	mid[0] = 1;

	rc = mon_open(&m, 1024, 1024);
	CHECK_EQ(rc, 0);

	/* Control: a page inside the long invalidation's range. */
	rc = run(&m, low + LOW_LEN / 2, &ctl_tries, &ctl_refused);
	CHECK_EQ(rc, 0);
	printf("control, a page the zaps cover: %lu of %lu watches not armed (%lu long zaps)\n",
	       ctl_refused, ctl_tries, low_zaps);
	CHECK(ctl_refused > 0);

	low_zaps = high_zaps = 0;
	rc = run(&m, mid, &tries, &refused);
	CHECK_EQ(rc, 0);
	printf("the page between them: %lu of %lu watches not armed (%lu long zaps below, "
	       "%lu one-page zaps above)\n", refused, tries, low_zaps, high_zaps);
	CHECK(low_zaps > 0 && high_zaps > 0 && tries > 0);
	CHECK_EQ(refused, 0);

	mon_close(&m);
	munmap(area, LOW_LEN + 4 * PAGE);
	return test_result();
}
