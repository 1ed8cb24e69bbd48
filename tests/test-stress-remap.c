/* SPDX-License-Identifier: MIT */
/*
 * Stress: reader threads get/check/put their ranges with the io_uring
 * oracle while another thread keeps replacing those ranges' pages
 * (mmap MAP_FIXED over, mremap of fresh memory onto, MADV_DONTNEED).
 *
 * A check counts only when no replacement of its range started or ended
 * between the reader's get and its comparison (a per-range sequence
 * number, odd while a replacement runs): the registration then had to
 * match the pages the range maps.  Real monitors must give zero stale
 * results; monitor `none`, the negative control, must give some.  The
 * replacements never leave a hole, so a reader never faults.
 *
 * Monitors: MRCACHE_MONITOR when set, else every real one; a monitor that
 * cannot start is skipped.  About 1.5 s per monitor.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#define READERS 3
#define RANGES_PER_READER 4
#define NRANGES (READERS * RANGES_PER_READER)
#define RANGE_LEN (16 * 1024)
#define RUN_NS 1500000000ull

struct range {
	char *addr;
	unsigned seq;		/* atomic: odd while its pages are replaced */
};

struct run {
	struct oracle *o;
	struct mrcache *cache;
	struct range ranges[NRANGES];
	int stop;		/* atomic */
	/* Totals, atomic. */
	uint64_t checks, stale, after_replace, inconclusive, errors;
	uint64_t replacements;
};

struct reader {
	struct run *run;
	unsigned id;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void add(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct run *run = rd->run;
	uint32_t seed = 0x9e3779b9u * (rd->id + 1);

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		unsigned i = rd->id * RANGES_PER_READER + rnd(&seed) % RANGES_PER_READER;
		struct range *rg = &run->ranges[i];
		struct mrcache_region *r;
		unsigned s1, s2;
		int ret;

		s1 = __atomic_load_n(&rg->seq, __ATOMIC_ACQUIRE);
		if (s1 & 1) {
			sched_yield();
			continue;
		}
		ret = mrcache_get(run->cache, rg->addr, RANGE_LEN,
				  MRCACHE_ACCESS_LOCAL_WRITE, &r);
		if (ret) {
			fprintf(stderr, "get: %s\n", strerror(-ret));
			add(&run->errors);
			continue;
		}
		ret = oracle_check(run->o, rd->id, r, rg->addr, RANGE_LEN);
		mrcache_put(run->cache, r);
		/* A read-modify-write orders the comparison before this
		 * re-read (a plain acquire load would not). */
		s2 = __atomic_fetch_add(&rg->seq, 0, __ATOMIC_ACQ_REL);
		if (ret < 0) {
			fprintf(stderr, "oracle: %s\n", strerror(-ret));
			add(&run->errors);
		} else if (s1 != s2) {
			add(&run->inconclusive);
		} else {
			add(&run->checks);
			if (s1)
				add(&run->after_replace);
			if (ret == ORACLE_STALE)
				add(&run->stale);
		}
	}
	return NULL;
}

/* Fresh pages at rg->addr, never a hole. */
static int replace(struct range *rg, uint32_t *seed)
{
	void *fresh;

	switch (rnd(seed) % 3) {
	case 0:
		fresh = mmap(rg->addr, RANGE_LEN, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		return fresh == rg->addr ? 0 : -errno;
	case 1:
		fresh = mmap(NULL, RANGE_LEN, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fresh == MAP_FAILED)
			return -errno;
		fresh = mremap(fresh, RANGE_LEN, RANGE_LEN,
			       MREMAP_MAYMOVE | MREMAP_FIXED, rg->addr);
		return fresh == rg->addr ? 0 : -errno;
	default:
		return madvise(rg->addr, RANGE_LEN, MADV_DONTNEED) ? -errno : 0;
	}
}

static void *replacer_main(void *arg)
{
	struct run *run = arg;
	uint32_t seed = 12345;
	uint64_t end = now_ns() + RUN_NS;

	while (now_ns() < end) {
		struct range *rg = &run->ranges[rnd(&seed) % NRANGES];

		__atomic_fetch_add(&rg->seq, 1, __ATOMIC_ACQ_REL);
		if (replace(rg, &seed))
			add(&run->errors);
		__atomic_fetch_add(&rg->seq, 1, __ATOMIC_RELEASE);
		add(&run->replacements);
		usleep(200);
	}
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* 1 when the monitor ran, 0 when it cannot start here. */
static int stress(struct oracle *o, enum mrcache_monitor_kind m)
{
	struct reader readers[READERS];
	pthread_t rt[READERS], ut;
	struct mrcache_config cfg;
	struct run run;
	int ret;

	memset(&run, 0, sizeof(run));
	run.o = o;
	oracle_config(o, &cfg, m, 64);
	ret = mrcache_create(&cfg, &run.cache);
	if (ret) {
		printf("%-7s SKIP (cannot start here: %s)\n",
		       mrcache_monitor_name(m), strerror(-ret));
		return 0;
	}
	for (int i = 0; i < NRANGES; i++) {
		run.ranges[i].addr = mmap(NULL, RANGE_LEN, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(run.ranges[i].addr != MAP_FAILED);
	}
	for (unsigned i = 0; i < READERS; i++) {
		readers[i] = (struct reader){ &run, i };
		CHECK_EQ(pthread_create(&rt[i], NULL, reader_main, &readers[i]), 0);
	}
	CHECK_EQ(pthread_create(&ut, NULL, replacer_main, &run), 0);
	pthread_join(ut, NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(rt[i], NULL);
	printf("%-7s %llu replacements, %llu checks (%llu after a replacement), "
	       "%llu inconclusive, %llu stale, %llu errors\n",
	       mrcache_monitor_name(m), (unsigned long long)run.replacements,
	       (unsigned long long)run.checks, (unsigned long long)run.after_replace,
	       (unsigned long long)run.inconclusive, (unsigned long long)run.stale,
	       (unsigned long long)run.errors);
	CHECK_EQ(run.errors, 0);
	CHECK(run.after_replace > 0);
	if (m == MRCACHE_MONITOR_NONE)
		CHECK(run.stale > 0);	/* negative control */
	else
		CHECK_EQ(run.stale, 0);
	CHECK_EQ(mrcache_flush(run.cache) >= 0, 1);
	CHECK_EQ(mrcache_destroy(run.cache), 0);
	for (int i = 0; i < NRANGES; i++)
		munmap(run.ranges[i].addr, RANGE_LEN);
	return 1;
}

int main(void)
{
	static const enum mrcache_monitor_kind all[] = {
		MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
	};
	const char *env = getenv("MRCACHE_MONITOR");
	enum mrcache_monitor_kind m;
	struct oracle o;
	int ran = 0, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = oracle_init(&o, READERS, RANGE_LEN);
	if (ret)
		SKIP("io_uring unusable here: %s", strerror(-ret));
	if (!stress(&o, MRCACHE_MONITOR_NONE))
		return 1;
	if (env && *env && mrcache_monitor_parse(env, &m) == 0) {
		if (m != MRCACHE_MONITOR_NONE)
			ran += stress(&o, m);
	} else {
		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			ran += stress(&o, all[i]);
	}
	oracle_fini(&o);
	if (!test_failures && !ran)
		SKIP("no monitor that starts here");
	return test_result();
}
