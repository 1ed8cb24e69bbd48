/* SPDX-License-Identifier: MIT */
/*
 * lib-workload - a program that uses libmrcache, for mrc-prof's time-split
 * test: hits, misses, registrations through a callbacks backend that
 * takes a few microseconds, and invalidations by munmap.  Prints the
 * cache's own statistics so the test can compare them with what mrc-prof
 * read from the MRCACHE_PROF dump.
 *   lib-workload [MONITOR]      (default auto)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include "mrcache.h"

#define NBUF 8
#define LEN (64 * 1024)

static void spin_ns(long ns)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < ns);
}

static int slow_reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
		    uint64_t *key)
{
	spin_ns(3000);
	*handle = addr;
	*key = (uint64_t)(uintptr_t)addr;
	return 0;
}

static int slow_dereg(void *arg, void *handle)
{
	spin_ns(6000);
	return 0;
}

static const struct mrcache_backend_ops ops = { .reg = slow_reg, .dereg = slow_dereg };

int main(int argc, char **argv)
{
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;
	char *buf[NBUF];
	int rc;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	if (argc > 1 && mrcache_monitor_parse(argv[1], &cfg.monitor)) {
		fprintf(stderr, "unknown monitor %s\n", argv[1]);
		return 1;
	}
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		fprintf(stderr, "mrcache_create: %d\n", rc);
		return rc == -95 ? 77 : 1;	/* -EOPNOTSUPP: no monitor here */
	}
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < NBUF; i++) {
			buf[i] = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (buf[i] == MAP_FAILED)
				return 1;
			buf[i][0] = 1;
		}
		for (int n = 0; n < 400; n++) {
			struct mrcache_region *r;

			if (mrcache_get(c, buf[n % NBUF], LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r) ||
			    mrcache_put(c, r))
				return 1;
		}
		for (int i = 0; i < NBUF; i++)
			munmap(buf[i], LEN);	/* the monitor invalidates them */
		mrcache_progress(c);
	}
	mrcache_flush(c);
	mrcache_stats_get(c, &st);
	printf("monitor=%s hits=%" PRIu64 " misses=%" PRIu64 " registrations=%" PRIu64
	       " failures=%" PRIu64 " deregistrations=%" PRIu64 "\n",
	       mrcache_monitor_name(st.monitor), st.hits + st.subrange_hits, st.misses,
	       st.registrations, st.registration_failures, st.deregistrations);
	return mrcache_destroy(c) ? 1 : 0;
}
