/* SPDX-License-Identifier: MIT */
/*
 * The hazard-slot hit path against everything that reclaims: threads get
 * random ranges of a few shared pages and hold up to HOLD regions each
 * (more than a thread's slots, so some holds are references), put them in
 * random order, hand some to other threads to put (a put of a region
 * another thread got), invalidate, flush, and exit while holding regions
 * (their slots become references); the cache is small, so misses evict.
 * The backend checks every deregistration against the holds: deregistering
 * a held region fails the test, and so does a hit on a registration older
 * than an invalidation of its range that finished before the get began (a
 * stale hit).  Runs under TSan and ASan in CI.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "testutil.h"
#include "mrcache.h"

#define P 4096
#define PAGES 48
#define THREADS 6
#define ROUNDS 8
#define OPS 6000
#define HOLD 9
#define HANDOFF 16
#define MAXKEYS (1u << 20)

static struct mrcache *cache;
static char *buf;
static uint64_t seq;				/* atomic: orders regs and invalidations */
static uint64_t next_key;			/* atomic */
static uint8_t live[MAXKEYS];			/* atomic */
static int32_t held[MAXKEYS];			/* atomic: holds handed out, not yet put */
static uint64_t reg_seq[MAXKEYS];		/* atomic */
static uint64_t inv_seq[PAGES];			/* atomic: the last invalidation's start */
static struct mrcache_region *handoff[HANDOFF];	/* atomic: held, for anyone to put */
static uint64_t bad_deregs, stale_hits, too_many;	/* atomic */

static int reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
	       uint64_t *key)
{
	uint64_t k = __atomic_add_fetch(&next_key, 1, __ATOMIC_RELAXED);

	if (k >= MAXKEYS) {
		__atomic_store_n(&too_many, 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	__atomic_store_n(&reg_seq[k], __atomic_fetch_add(&seq, 1, __ATOMIC_SEQ_CST),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&live[k], 1, __ATOMIC_RELEASE);
	*handle = (void *)(uintptr_t)k;
	*key = k;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	uint64_t k = (uintptr_t)handle;

	if (__atomic_load_n(&held[k], __ATOMIC_SEQ_CST) != 0 ||
	    !__atomic_exchange_n(&live[k], 0, __ATOMIC_ACQ_REL)) {
		fprintf(stderr, "deregistration of key %llu, held %d\n", (unsigned long long)k,
			__atomic_load_n(&held[k], __ATOMIC_SEQ_CST));
		__atomic_fetch_add(&bad_deregs, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

static const struct mrcache_backend_ops ops = { reg, dereg };

static void put(struct mrcache_region *r)
{
	__atomic_fetch_sub(&held[mrcache_region_key(r)], 1, __ATOMIC_SEQ_CST);
	CHECK_EQ(mrcache_put(cache, r), 0);
}

static struct mrcache_region *get(unsigned *seed)
{
	size_t page = (size_t)(rand_r(seed) % PAGES), off = page * P + rand_r(seed) % P;
	size_t len = 1 + rand_r(seed) % (2 * P), last;
	uint64_t newest = 0, k;
	struct mrcache_region *r;
	int rc;

	if (off + len > (size_t)PAGES * P)
		len = (size_t)PAGES * P - off;
	last = (off + len - 1) / P;
	for (size_t p = page; p <= last; p++) {
		uint64_t s = __atomic_load_n(&inv_seq[p], __ATOMIC_SEQ_CST);

		if (s > newest)
			newest = s;
	}
	rc = mrcache_get(cache, buf + off, len, rand_r(seed) % 2, &r);
	if (rc) {
		CHECK(rc == -ENOSPC || rc == -EAGAIN);
		return NULL;
	}
	k = mrcache_region_key(r);
	__atomic_fetch_add(&held[k], 1, __ATOMIC_SEQ_CST);
	CHECK(__atomic_load_n(&live[k], __ATOMIC_ACQUIRE));
	CHECK((char *)mrcache_region_addr(r) <= buf + off);
	CHECK((char *)mrcache_region_addr(r) + mrcache_region_length(r) >= buf + off + len);
	if (newest && __atomic_load_n(&reg_seq[k], __ATOMIC_RELAXED) < newest) {
		fprintf(stderr, "stale hit: key %llu registered at %llu, invalidated at %llu\n",
			(unsigned long long)k,
			(unsigned long long)__atomic_load_n(&reg_seq[k], __ATOMIC_RELAXED),
			(unsigned long long)newest);
		__atomic_fetch_add(&stale_hits, 1, __ATOMIC_RELAXED);
	}
	return r;
}

static void invalidate(unsigned *seed)
{
	size_t page = (size_t)(rand_r(seed) % PAGES), n = 1 + rand_r(seed) % 3;
	uint64_t s;

	if (page + n > PAGES)
		n = PAGES - page;
	s = __atomic_fetch_add(&seq, 1, __ATOMIC_SEQ_CST);
	CHECK(mrcache_invalidate(cache, buf + page * P, n * P) >= 0);
	for (size_t p = page; p < page + n; p++) {
		uint64_t old = __atomic_load_n(&inv_seq[p], __ATOMIC_SEQ_CST);

		while (old < s && !__atomic_compare_exchange_n(&inv_seq[p], &old, s, 0,
							      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			;
	}
}

/* Put whatever sits in handoff slot i, or leave r there for another
 * thread (r NULL: only take). */
static void swap_handoff(unsigned i, struct mrcache_region *r)
{
	struct mrcache_region *old = __atomic_exchange_n(&handoff[i % HANDOFF], r,
							 __ATOMIC_ACQ_REL);

	if (old)
		put(old);
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct mrcache_region *mine[HOLD] = { 0 };

	for (int i = 0; i < OPS; i++) {
		unsigned op = (unsigned)rand_r(&seed) % 100, h = (unsigned)rand_r(&seed) % HOLD;

		if (op < 55) {
			if (mine[h])
				put(mine[h]);
			mine[h] = get(&seed);
		} else if (op < 80) {
			if (mine[h])
				put(mine[h]);
			mine[h] = NULL;
		} else if (op < 88) {
			swap_handoff((unsigned)rand_r(&seed), mine[h]);
			mine[h] = NULL;
		} else if (op < 96) {
			invalidate(&seed);
		} else if (op < 98) {
			CHECK(mrcache_flush(cache) >= 0);
		} else {
			CHECK(mrcache_progress(cache) >= 0);
		}
	}
	/* Exit holding some: the handoff takes them, another thread puts. */
	for (int h = 0; h < HOLD; h++)
		if (mine[h])
			swap_handoff((unsigned)rand_r(&seed), mine[h]);
	return NULL;
}

int main(void)
{
	struct mrcache_config cfg;
	struct mrcache_stats st;
	unsigned seed0 = 1;

	buf = mmap(NULL, (size_t)PAGES * P, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags |= MRCACHE_FLAG_NO_ENV;
	cfg.max_regions = 12;
	CHECK_EQ(mrcache_create(&cfg, &cache), 0);

	for (int round = 0; round < ROUNDS; round++) {
		pthread_t t[THREADS];

		for (int i = 0; i < THREADS; i++)
			pthread_create(&t[i], NULL, worker,
				       (void *)(uintptr_t)(round * THREADS + i + seed0));
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
	}
	for (unsigned i = 0; i < HANDOFF; i++)
		swap_handoff(i, NULL);

	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	printf("hits %llu sub %llu misses %llu regs %llu deregs %llu evictions %llu "
	       "invalidations %llu uncached %llu\n",
	       (unsigned long long)st.hits, (unsigned long long)st.subrange_hits,
	       (unsigned long long)st.misses, (unsigned long long)st.registrations,
	       (unsigned long long)st.deregistrations, (unsigned long long)st.evictions,
	       (unsigned long long)st.invalidations[MRCACHE_CAUSE_MANUAL],
	       (unsigned long long)st.uncached);
	CHECK_EQ(mrcache_destroy(cache), 0);
	CHECK_EQ(__atomic_load_n(&bad_deregs, __ATOMIC_RELAXED), 0);
	CHECK_EQ(__atomic_load_n(&stale_hits, __ATOMIC_RELAXED), 0);
	CHECK_EQ(__atomic_load_n(&too_many, __ATOMIC_RELAXED), 0);
	for (uint64_t k = 1; k <= next_key && k < MAXKEYS; k++) {
		if (live[k] || held[k]) {
			fprintf(stderr, "key %llu: live %d held %d at the end\n",
				(unsigned long long)k, live[k], held[k]);
			CHECK(0);
			break;
		}
	}
	return test_result();
}
