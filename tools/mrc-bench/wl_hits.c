/* SPDX-License-Identifier: MIT */
/*
 * wl_hits.c - hits: get+put of cached one-page regions in random order, by
 * one thread over 1, 100 or 10,000 regions (median of short slices), and
 * by 1, 2, 4 or 8 threads sharing one cache (aggregate throughput while
 * every thread runs, how many CPUs the threads kept busy: a row of
 * threads that took turns, below BUSY_MIN, is INVALID; and CPU time per
 * operation from
 * CLOCK_THREAD_CPUTIME_ID: on two cores shared with other work a second
 * thread also wins a bigger share of the machine, which the wall-clock
 * ratio credits to the cache, and 4 or 8 threads are oversubscribed; the
 * CPU time an operation costs is what contention shows in).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include "bench.h"

#define ORDER_LEN 4096		/* power of two: the order repeats */

struct hit_set {
	void *base;
	size_t n;
	void **addr;
	unsigned order[ORDER_LEN];
};

static int hit_set_open(struct bench_peer *p, struct hit_set *h, size_t n,
			uint64_t seed)
{
	void *ref;
	int ret;

	h->n = n;
	h->base = pages_map(2 * n);
	h->addr = h->base ? regions_layout(h->base, n) : NULL;
	if (!h->addr) {
		if (h->base)
			munmap(h->base, 2 * n * page_size());
		h->base = NULL;
		return -ENOMEM;
	}
	for (unsigned i = 0; i < ORDER_LEN; i++)
		h->order[i] = (unsigned)(rng_next(&seed) % n);
	for (size_t i = 0; i < n; i++) {	/* the misses that fill it */
		ret = peer_get(p, h->addr[i], page_size(), &ref);
		if (ret < 0)
			return ret;
		p->ops->put(p, ref);
	}
	return 0;
}

static void hit_set_close(struct hit_set *h)
{
	if (h->base)
		munmap(h->base, 2 * h->n * page_size());
	free(h->addr);
}

/* The loop measured: nothing in it but the order lookup, get and put. */
static int hit_loop(struct bench_peer *p, const struct hit_set *h, long ops,
		    unsigned first)
{
	size_t len = page_size();
	void *ref;

	for (long i = 0; i < ops; i++) {
		void *a = h->addr[h->order[(first + i) & (ORDER_LEN - 1)]];

		if (peer_get(p, a, len, &ref) < 0)
			return -EIO;
		p->ops->put(p, ref);
	}
	return 0;
}

#define HIT_SLICE 8192		/* ops per timed slice: well under 1 ms */

static int hits_run(struct bench_peer *p, long regions,
		    const struct bench_opts *o, double *v)
{
	struct hit_set *h = calloc(1, sizeof(*h));
	long slices = o->ops / HIT_SLICE + 1;
	struct batches b;
	int ret;

	if (!h || batches_init(&b, (int)slices) < 0) {
		free(h);
		return -ENOMEM;
	}
	ret = hit_set_open(p, h, (size_t)regions, 0x9e3779b97f4a7c15ull);
	if (ret == 0)
		ret = hit_loop(p, h, o->ops / 10, 0);	/* warm caches */
	for (long s = 0; s < slices && ret == 0; s++) {
		uint64_t t0 = now_ns();

		ret = hit_loop(p, h, HIT_SLICE, (unsigned)(s * HIT_SLICE));
		batches_add(&b, now_ns() - t0, HIT_SLICE);
	}
	v[0] = batches_median(&b);
	hit_set_close(h);
	free(h);
	return ret;
}

const struct workload wl_hits = {
	.name = "hits",
	.what = "get+put of a cached 4 KiB region, random order",
	.param_name = "regions",
	.params = { 1, 100, 10000 },
	.quick_params = { 1, 100 },
	.nmetrics = 1,
	.metric = { "ns/op" },
	.lower_is_better = 1,
	.run = hits_run,
};

struct hit_thread {
	pthread_t tid;
	struct bench_peer *p;
	const struct hit_set *h;
	pthread_barrier_t *start;
	const int *stop;
	long ops;			/* done, in chunks of THREADS_CHUNK */
	unsigned first;
	uint64_t start_ns, end_ns;
	uint64_t cpu_ns;		/* CPU time the thread used */
	int ret;
};

#define THREADS_REGIONS 1000
#define THREADS_MAX 8
#define THREADS_CHUNK 1024

/* Every thread runs until told to stop, so all of them are running for
 * the whole measured time (with a fixed count, the first to finish would
 * leave the other alone on the machine). */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *hit_thread_main(void *arg)
{
	struct hit_thread *t = arg;

	uint64_t cpu0;

	pthread_barrier_wait(t->start);
	t->start_ns = now_ns();
	cpu0 = thread_cpu_ns();
	while (!__atomic_load_n(t->stop, __ATOMIC_RELAXED) && t->ret == 0) {
		t->ret = hit_loop(t->p, t->h, THREADS_CHUNK,
				  t->first + (unsigned)t->ops);
		t->ops += THREADS_CHUNK;
	}
	t->end_ns = now_ns();
	t->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

static int threads_run(struct bench_peer *p, long nthreads,
		       const struct bench_opts *o, double *v)
{
	struct hit_thread t[THREADS_MAX] = { 0 };
	pthread_barrier_t start;
	struct hit_set *h = calloc(1, sizeof(*h));
	uint64_t t0 = UINT64_MAX, last = 0;
	struct timespec run_for = { 0, o->quick ? 20000000 : 300000000 };
	long total = 0;
	uint64_t cpu = 0;
	int ret, stop = 0;

	if (!h || nthreads < 1 || nthreads > THREADS_MAX) {
		free(h);
		return -EINVAL;
	}
	ret = hit_set_open(p, h, o->quick ? 100 : THREADS_REGIONS, 42);
	if (ret == 0)
		ret = hit_loop(p, h, o->ops / 10, 0);
	if (ret < 0)
		goto out;
	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	for (long i = 0; i < nthreads; i++) {
		t[i] = (struct hit_thread){ .p = p, .h = h, .start = &start,
					    .stop = &stop,
					    .first = (unsigned)i * 1237 };
		pthread_create(&t[i].tid, NULL, hit_thread_main, &t[i]);
	}
	pthread_barrier_wait(&start);
	nanosleep(&run_for, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (long i = 0; i < nthreads; i++) {
		pthread_join(t[i].tid, NULL);
		total += t[i].ops;
		cpu += t[i].cpu_ns;
		if (t[i].ret < 0)
			ret = t[i].ret;
		if (t[i].start_ns < t0)
			t0 = t[i].start_ns;
		if (t[i].end_ns > last)
			last = t[i].end_ns;
	}
	pthread_barrier_destroy(&start);
	/* CPU time per op first: what the table ranks and the plot shows;
	 * then the aggregate, every op of every thread over the wall time. */
	v[0] = (double)cpu / (double)total;
	v[1] = (double)total * 1e3 / (double)(last - t0);
	v[2] = (double)(last - t0) * (double)nthreads / (double)total;
	/* How many CPUs the threads kept busy: below BUSY_MIN they took
	 * turns, and the row is INVALID (result_took_turns). */
	v[3] = (double)cpu / (double)(last - t0);
out:
	hit_set_close(h);
	free(h);
	return ret;
}

const struct workload wl_threads = {
	.name = "threads",
	.what = "threads sharing one cache, hits on 1,000 regions",
	.param_name = "threads",
	.params = { 1, 2, 4, 8 },	/* 4 and 8 oversubscribe 2 cores */
	.quick_params = { 1, 2, 4, 8 },
	.nmetrics = 4,
	.metric = { "CPU ns/op", "Mops/s", "ns/op/thread", BUSY_METRIC },
	.lower_is_better = 1,
	.run = threads_run,
};
