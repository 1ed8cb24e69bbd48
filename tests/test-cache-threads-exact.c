/* SPDX-License-Identifier: MIT */
/*
 * Hit counts are exact however many threads come and go.  Regression:
 * stripes were picked by a never-reused thread number mod 16, so the 17th
 * thread ever started counted in the first one's stripe and, while both
 * ran, their increments raced: here the main thread hits, 15 threads hit
 * once and exit, then a 17th hits for a while beside the main thread (on
 * 0.1 the count came out short).  Then waves of threads that start
 * together, more threads in all than blocks (threads.h), one wave with
 * more alive at once than blocks (the rest count in the shared block).
 */
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include "cache/cache.h"
#include "testbackend.h"
#include "testutil.h"

#define WAVE_OPS 20000
#define PAIR_NS 300000000ull

static struct mrcache *cache;
static char *buf;
static pthread_barrier_t start;
static uint64_t done_ops;	/* atomic: every thread's successful gets */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int hit(int i)
{
	struct mrcache_region *r;

	if (mrcache_get(cache, buf + (i & 1), 64, 0, &r) != 0) {
		CHECK(0);
		return 0;
	}
	CHECK_EQ(mrcache_put(cache, r), 0);
	return 1;
}

/* Hit for PAIR_NS after the barrier; *arg: the block this thread counts in. */
static void *hit_for_a_while(void *arg)
{
	uint64_t n = 0, end;

	*(struct mrc_thread **)arg = mrc_thread_get(cache->threads);
	pthread_barrier_wait(&start);
	end = now_ns() + PAIR_NS;
	do {
		for (int i = 0; i < 1000; i++)
			n += (uint64_t)hit(i);
	} while (now_ns() < end);
	__atomic_fetch_add(&done_ops, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *hit_once(void *arg)
{
	__atomic_fetch_add(&done_ops, (uint64_t)hit(0), __ATOMIC_RELAXED);
	return NULL;
}

static void *hit_in_wave(void *arg)
{
	uint64_t n = 0;

	pthread_barrier_wait(&start);
	for (int i = 0; i < WAVE_OPS; i++)
		n += (uint64_t)hit(i);
	__atomic_fetch_add(&done_ops, n, __ATOMIC_RELAXED);
	return NULL;
}

static void wave(int n)
{
	pthread_t t[2 * MRC_THREADS];

	pthread_barrier_init(&start, NULL, (unsigned)n);
	for (int i = 0; i < n; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, hit_in_wave, NULL), 0);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
}

/* The main thread and the 17th thread ever to hit, at once. */
static void seventeenth(void)
{
	struct mrc_thread *mine, *its;
	pthread_t t;

	__atomic_fetch_add(&done_ops, (uint64_t)hit(0), __ATOMIC_RELAXED);
	for (int i = 0; i < 15; i++) {
		CHECK_EQ(pthread_create(&t, NULL, hit_once, NULL), 0);
		pthread_join(t, NULL);
	}
	pthread_barrier_init(&start, NULL, 2);
	CHECK_EQ(pthread_create(&t, NULL, hit_for_a_while, &its), 0);
	hit_for_a_while(&mine);
	pthread_join(t, NULL);
	/* What the count shows only when the two really run at once. */
	CHECK(mine != its);
	CHECK(mine != &cache->threads->shared);
	pthread_barrier_destroy(&start);
}

static void check_counts(const char *what)
{
	struct mrcache_stats st;
	uint64_t ops = __atomic_load_n(&done_ops, __ATOMIC_RELAXED);

	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	printf("%s: gets %llu hits %llu sub %llu misses %llu\n", what, (unsigned long long)ops,
	       (unsigned long long)st.hits, (unsigned long long)st.subrange_hits,
	       (unsigned long long)st.misses);
	CHECK_EQ(st.hits + st.subrange_hits + st.misses, ops);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;

	buf = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &cache), 0);

	seventeenth();
	check_counts("17 threads");
	for (int w = 0; w < 3; w++)
		wave(24);
	wave(MRC_THREADS + 16);
	wave(24);
	check_counts("waves");

	CHECK_EQ(mrcache_destroy(cache), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
