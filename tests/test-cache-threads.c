/* SPDX-License-Identifier: MIT */
/*
 * Any call from any thread is safe: four threads get, check and put random
 * ranges while another invalidates and flushes.  Every region handed out
 * covers its request and stays registered until its put; nothing leaks and
 * nothing is deregistered twice.  Runs under TSan in CI.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

#define P 4096
#define PAGES 256
#define THREADS 4
#define OPS 200000

static struct test_backend tb;
static struct mrcache *cache;
static char *buf;
static int stop;

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < OPS; i++) {
		size_t off = (size_t)(rand_r(&seed) % PAGES) * P + rand_r(&seed) % P;
		size_t len = 1 + rand_r(&seed) % (3 * P);
		struct mrcache_region *r;
		int rc;

		if (off + len > (size_t)PAGES * P)
			len = (size_t)PAGES * P - off;
		rc = mrcache_get(cache, buf + off, len, rand_r(&seed) % 4, &r);
		CHECK_EQ(rc, 0);
		if (rc)
			continue;
		CHECK((char *)mrcache_region_addr(r) <= buf + off);
		CHECK((char *)mrcache_region_addr(r) + mrcache_region_length(r) >= buf + off + len);
		if (i % 64 == 0)
			CHECK(test_backend_covers(&tb, buf + off, len));
		CHECK_EQ(mrcache_put(cache, r), 0);
	}
	return NULL;
}

static void *invalidator(void *arg)
{
	unsigned seed = 99;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		size_t off = (size_t)(rand_r(&seed) % PAGES) * P;

		CHECK(mrcache_invalidate(cache, buf + off, P) >= 0);
		if (rand_r(&seed) % 16 == 0)
			CHECK(mrcache_flush(cache) >= 0);
		CHECK(mrcache_progress(cache) >= 0);
	}
	return NULL;
}

int main(void)
{
	struct mrcache_config cfg;
	pthread_t t[THREADS], inv;
	struct mrcache_stats st;

	buf = mmap(NULL, (size_t)PAGES * P, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_regions = 64;
	CHECK_EQ(mrcache_create(&cfg, &cache), 0);
	pthread_create(&inv, NULL, invalidator, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(inv, NULL);

	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	CHECK_EQ(st.hits + st.subrange_hits + st.misses, THREADS * OPS);
	CHECK_EQ(st.registrations, tb.regs);
	printf("hits %llu sub %llu misses %llu regs %llu invalidations %llu evictions %llu merges %llu\n",
	       (unsigned long long)st.hits, (unsigned long long)st.subrange_hits,
	       (unsigned long long)st.misses, (unsigned long long)st.registrations,
	       (unsigned long long)st.invalidations[MRCACHE_CAUSE_MANUAL],
	       (unsigned long long)st.evictions, (unsigned long long)st.merges);
	CHECK_EQ(mrcache_destroy(cache), 0);
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
