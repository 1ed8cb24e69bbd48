/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-stress: the synchronous guarantee under stress.  One thread
 * maps fresh pages over the same address in a loop (MAP_FIXED: an unmap
 * and a map with no hole); two threads get the range from a cache on the
 * kernel monitor and check it with the io_uring oracle, for at least
 * 100,000 replacements.  A check is conclusive when no
 * replacement started or ended between its get and its comparison (a
 * sequence number, odd while one runs): the registration then had to
 * match the current pages.  Zero stale results are allowed.
 * Negative control: the same with the module bypassed (monitor none)
 * must see stale data.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include "oracle.h"
#include "mrmon_test.h"

#define READERS 2
#define LEN (4 * PAGE)

struct run {
	struct oracle *o;
	struct mrcache *cache;
	char *addr;
	unsigned seq;			/* odd while the pages are replaced */
	int stop;
	uint64_t want, checks, stale, inconclusive, errors, gave_up, replacements;
};

static void *reader(void *arg)
{
	static unsigned next_lane;
	struct run *run = arg;
	unsigned lane = __atomic_fetch_add(&next_lane, 1, __ATOMIC_RELAXED) % READERS;
	char *addr = run->addr + lane * LEN;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		struct mrcache_region *r;
		unsigned s1 = __atomic_load_n(&run->seq, __ATOMIC_ACQUIRE), s2;
		int ret;

		if (s1 & 1) {
			sched_yield();
			continue;
		}
		ret = mrcache_get(run->cache, addr, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);
		if (ret == -EAGAIN) {
			/* The cache gave up retrying: every registration
			 * was overtaken by a replacement (and caught). */
			__atomic_fetch_add(&run->gave_up, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (ret) {
			fprintf(stderr, "get: %s\n", strerror(-ret));
			__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED);
			continue;
		}
		ret = oracle_check(run->o, lane, r, addr, LEN);
		mrcache_put(run->cache, r);
		s2 = __atomic_fetch_add(&run->seq, 0, __ATOMIC_ACQ_REL);
		if (ret < 0) {
			fprintf(stderr, "oracle: %s\n", strerror(-ret));
			__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED);
		} else if (s1 != s2) {
			__atomic_fetch_add(&run->inconclusive, 1, __ATOMIC_RELAXED);
		} else {
			if (ret == ORACLE_STALE)
				__atomic_fetch_add(&run->stale, 1, __ATOMIC_RELAXED);
			__atomic_fetch_add(&run->checks, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void *replacer(void *arg)
{
	struct run *run = arg;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&run->seq, 1, __ATOMIC_ACQ_REL);
		if (mmap(run->addr, READERS * LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != run->addr)
			__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&run->seq, 1, __ATOMIC_RELEASE);
		if (++run->replacements >= run->want)
			__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
		/* Leave the readers windows with no replacement running. */
		if (run->replacements % 8 == 0)
			usleep(100);
	}
	return NULL;
}

static void stress(struct oracle *o, enum mrcache_monitor_kind mon, uint64_t want)
{
	struct mrcache_config cfg;
	pthread_t rt[READERS], ut;
	struct run run = { .o = o, .want = want };

	oracle_config(o, &cfg, mon, 16);
	if (mrcache_create(&cfg, &run.cache))
		SKIP("monitor %s cannot start", mrcache_monitor_name(mon));
	run.addr = mon_map_anon(READERS * LEN);
	for (int i = 0; i < READERS; i++)
		CHECK_EQ(pthread_create(&rt[i], NULL, reader, &run), 0);
	CHECK_EQ(pthread_create(&ut, NULL, replacer, &run), 0);
	for (int i = 0; i < READERS; i++)
		pthread_join(rt[i], NULL);
	pthread_join(ut, NULL);
	printf("%-7s %llu conclusive checks, %llu stale, %llu inconclusive, %llu given up, "
	       "%llu replacements, %llu errors\n",
	       mrcache_monitor_name(mon), (unsigned long long)run.checks,
	       (unsigned long long)run.stale, (unsigned long long)run.inconclusive,
	       (unsigned long long)run.gave_up, (unsigned long long)run.replacements,
	       (unsigned long long)run.errors);
	CHECK_EQ(run.errors, 0);
	CHECK(run.checks > 0);
	if (mon == MRCACHE_MONITOR_NONE)
		CHECK(run.stale > 0);
	else
		CHECK_EQ(run.stale, 0);
	CHECK(mrcache_flush(run.cache) >= 0);
	CHECK_EQ(mrcache_destroy(run.cache), 0);
	munmap(run.addr, READERS * LEN);
}

int main(void)
{
	const char *env = getenv("MRMON_STRESS_CHECKS");
	uint64_t want = env ? strtoull(env, NULL, 0) : 100000;
	struct oracle o;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	if (oracle_init(&o, READERS, LEN))
		SKIP("io_uring oracle unavailable");
	stress(&o, MRCACHE_MONITOR_NONE, 5000);		/* the control */
	stress(&o, MRCACHE_MONITOR_KERNEL, want);
	oracle_fini(&o);
	return test_result();
}
