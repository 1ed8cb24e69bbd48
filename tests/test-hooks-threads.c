/* SPDX-License-Identifier: MIT */
/*
 * The hooks monitor starts and stops while other threads unmap and free in
 * a loop: no crash, no hang, and once a cache exists, no unmapping escapes
 * it.  Each round creates a cache with the busy threads running, caches a
 * buffer, unmaps it (munmap, or free() of a large block), maps fresh memory
 * at the same address and checks that the get misses; then destroys the
 * cache, still under load.  Negative control: the same round under `none`
 * hits.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define ROUNDS 300
#define LEN (256ul << 10)

static int stop_busy;

static void *busy(void *arg)
{
	while (!__atomic_load_n(&stop_busy, __ATOMIC_RELAXED)) {
		char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *q = malloc(LEN * 2);	/* above the mmap threshold */
		char *small = malloc(64);

		if (p != MAP_FAILED) {
			p[0] = 1;
			madvise(p, LEN, MADV_DONTNEED);
			munmap(p, LEN);
		}
		if (q)
			q[0] = 1;
		free(q);
		free(small);
	}
	return NULL;
}

static int get_missed(struct mrcache *c, void *p, size_t len)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;

	mrcache_stats_get(c, &a);
	if (mrcache_get(c, p, len, 0, &r))
		return -1;
	mrcache_put(c, r);
	mrcache_stats_get(c, &b);
	return b.misses > a.misses;
}

struct tally {
	int checked;	/* gets after an unmapping, at the same address */
	int missed;
};

/* Map fresh memory at [at, at+len) and count whether a get there misses.
 * Another thread may take the address first: then there is no check. */
static void check_fresh(struct mrcache *c, uintptr_t at, size_t len, struct tally *t)
{
	uintptr_t page = at & ~4095ul;
	size_t maplen = len + (at - page);
	void *p = mmap((void *)page, maplen, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (p == (void *)page) {
		t->checked++;
		t->missed += get_missed(c, (void *)at, len) == 1;
	}
	munmap(p, maplen);
}

/* One round; -1 when the monitor cannot start. */
static int round_trip(enum mrcache_monitor_kind m, struct tally *t)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	uintptr_t at;
	char *p, *q;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	if (mrcache_create(&cfg, &c))
		return -1;

	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	CHECK_EQ(get_missed(c, p, LEN), 1);
	at = (uintptr_t)p;
	CHECK_EQ(munmap(p, LEN), 0);
	check_fresh(c, at, LEN, t);

	q = malloc(4 * LEN);
	CHECK(q != NULL);
	CHECK_EQ(get_missed(c, q, 4 * LEN), 1);
	at = (uintptr_t)q;
	free(q);
	check_fresh(c, at, 4 * LEN, t);

	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return 0;
}

int main(void)
{
	struct tally hooks = { 0, 0 }, none = { 0, 0 };
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, busy, NULL), 0);
	alarm(120);
	for (int i = 0; i < ROUNDS; i++) {
		if (round_trip(MRCACHE_MONITOR_HOOKS, &hooks) < 0) {
			__atomic_store_n(&stop_busy, 1, __ATOMIC_RELAXED);
			SKIP("monitor hooks cannot start here");
		}
	}
	for (int i = 0; i < 10; i++)
		round_trip(MRCACHE_MONITOR_NONE, &none);
	__atomic_store_n(&stop_busy, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	printf("hooks: %d of %d gets after an unmapping missed\n", hooks.missed, hooks.checked);
	printf("none:  %d of %d (negative control)\n", none.missed, none.checked);
	CHECK(hooks.checked >= ROUNDS / 4);	/* most addresses come back */
	CHECK_EQ(hooks.missed, hooks.checked);
	CHECK(none.checked > 0);
	CHECK_EQ(none.missed, 0);
	return test_result();
}
