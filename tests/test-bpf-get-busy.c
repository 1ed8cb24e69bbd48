/* SPDX-License-Identifier: MIT */
/*
 * A get of a stable, mapped buffer while other threads hold mmap_lock: 4
 * threads realloc() (mmap, mremap shrink and grow, munmap) and one forks
 * (a fork holds the parent's mmap_lock while it copies the address space:
 * 128 MiB of touched memory make that last milliseconds),
 * while the main thread gets fresh buffers, each a miss that watches a new
 * range.  The bpf monitor's watch looks the range's VMA up with a trylock
 * of mmap_lock; it gave up after 1,000 failed tries and the get failed
 * with EAGAIN (issue 25 item 10).  Every get must succeed, and each range
 * must read fresh through the io_uring oracle.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bpf-test.h"
#include "oracle.h"
#include "testutil.h"

#define BUF (64ul << 10)
#define BIG (4ul << 20)
#define CHURNERS 4
#define BALLAST (128ul << 20)	/* touched: a fork copies its page tables */
#define RUN_NS (3ull * 1000000000)

static int stop;	/* atomic */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void *churn(void *arg)
{
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		char *p = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *q;

		if (p == MAP_FAILED)
			continue;
		p[0] = 1;
		q = mremap(p, BIG, BIG / 4, 0);
		if (q != MAP_FAILED) {
			p = q;
			q = mremap(p, BIG / 4, BIG, MREMAP_MAYMOVE);
			if (q != MAP_FAILED)
				p = q;
		}
		munmap(p, BIG);
	}
	return NULL;
}

static void *forker(void *arg)
{
	unsigned *forks = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0) {
			waitpid(pid, NULL, 0);
			(*forks)++;
		}
	}
	return NULL;
}

int main(void)
{
	unsigned gets = 0, busy = 0, failed = 0, stale = 0, forks = 0;
	pthread_t churners[CHURNERS], fork_thread;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct oracle o;
	uint64_t end;
	char *ballast;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bpf_test_pick_monitor();
	if (oracle_init(&o, 1, BUF))
		SKIP("io_uring is unusable here");
	oracle_config(&o, &cfg, MRCACHE_MONITOR_BPF, 64);
	if (!strcmp(getenv("MRCACHE_MONITOR"), "kernel"))
		cfg.monitor = MRCACHE_MONITOR_KERNEL;
	rc = mrcache_create(&cfg, &c);
	if (rc)
		SKIP("the %s monitor cannot start here: %s", getenv("MRCACHE_MONITOR"),
		     strerror(-rc));
	ballast = mmap(NULL, BALLAST, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ballast == MAP_FAILED)
		SKIP("no memory for the ballast");
	madvise(ballast, BALLAST, MADV_NOHUGEPAGE);
	memset(ballast, 1, BALLAST);
	for (int i = 0; i < CHURNERS; i++)
		CHECK_EQ(pthread_create(&churners[i], NULL, churn, NULL), 0);
	CHECK_EQ(pthread_create(&fork_thread, NULL, forker, &forks), 0);
	end = now_ns() + RUN_NS;
	while (now_ns() < end) {
		char *p = mmap(NULL, BUF, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct mrcache_region *r;

		if (p == MAP_FAILED)
			continue;
		memset(p, 1, BUF);
		rc = mrcache_get(c, p, BUF, MRCACHE_ACCESS_LOCAL_WRITE, &r);
		gets++;
		if (rc == -EAGAIN) {
			busy++;
		} else if (rc) {
			fprintf(stderr, "get: %s\n", strerror(-rc));
			failed++;
		} else {
			if (oracle_check(&o, 0, r, p, BUF) != ORACLE_FRESH)
				stale++;
			mrcache_put(c, r);
		}
		munmap(p, BUF);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < CHURNERS; i++)
		pthread_join(churners[i], NULL);
	pthread_join(fork_thread, NULL);
	printf("%u gets while %d threads realloc'ed and one forked %u times: "
	       "%u EAGAIN, %u other errors, %u stale\n",
	       gets, CHURNERS, forks, busy, failed, stale);
	CHECK_EQ(busy, 0);
	CHECK_EQ(failed, 0);
	CHECK_EQ(stale, 0);
	CHECK(gets > 0);
	munmap(ballast, BALLAST);
	mrcache_destroy(c);
	oracle_fini(&o);
	return test_result();
}
