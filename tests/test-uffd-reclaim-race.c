/* SPDX-License-Identifier: MIT */
/*
 * uffd: the handler thread and the cache's own work never deadlock.  One
 * thread unmaps and remaps cached buffers with raw syscalls (each one
 * blocks until the handler reads its event) while others get/put them and
 * reclaim: flush (deregister + UFFDIO_UNREGISTER under cache->lock),
 * progress, and destroy/create of a second cache sharing the userfaultfd.
 * A watchdog fails the test on a hang.  At the end, with everything
 * quiet, every buffer must still be watched: a raw munmap + remap of each
 * makes its get miss.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define NBUF 8
#define LEN (64ul << 10)
#define SECONDS 2

static char *bufs[NBUF];
static struct mrcache *cache;
static struct test_backend tb;
static int stop;

/* Map fresh memory at p: over what is there (`fixed`), or into the hole a
 * munmap left (which another thread's mmap may have taken meanwhile). */
static void *raw_remap(char *p, int fixed)
{
	return (void *)syscall(SYS_mmap, p, LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS |
			       (fixed ? MAP_FIXED : MAP_FIXED_NOREPLACE), -1, 0);
}

static void *unmapper(void *arg)
{
	unsigned i = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned k = i++ % NBUF;
		char *p = __atomic_load_n(&bufs[k], __ATOMIC_RELAXED);

		if (!p)
			continue;
		if (i % 3 == 0) {
			syscall(SYS_madvise, p, LEN, MADV_DONTNEED);
		} else if (i % 3 == 1) {
			raw_remap(p, 1);	/* MAP_FIXED over: an UNMAP event */
		} else {
			syscall(SYS_munmap, p, LEN);
			if (raw_remap(p, 0) != p)	/* taken: not ours any more */
				__atomic_store_n(&bufs[k], NULL, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static void *user(void *arg)
{
	unsigned i = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct mrcache_region *r;
		char *p = __atomic_load_n(&bufs[i++ % NBUF], __ATOMIC_RELAXED);

		if (p && mrcache_get(cache, p, LEN, 0, &r) == 0)
			mrcache_put(cache, r);
		if (i % 16 == 0)
			mrcache_flush(cache);
		else if (i % 4 == 0)
			mrcache_progress(cache);
	}
	return NULL;
}

/* A second cache on the same userfaultfd, created and destroyed in a loop
 * over the same buffers. */
static void *churn(void *arg)
{
	struct test_backend tb2;
	struct mrcache_config cfg;
	unsigned i = 0;

	test_backend_init(&tb2, 0);
	test_backend_config(&tb2, &cfg, MRCACHE_MONITOR_UFFD);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct mrcache_region *r;
		struct mrcache *c2;

		if (mrcache_create(&cfg, &c2))
			continue;
		for (int k = 0; k < 4; k++) {
			char *p = __atomic_load_n(&bufs[i++ % NBUF], __ATOMIC_RELAXED);

			if (p && mrcache_get(c2, p, LEN, 0, &r) == 0)
				mrcache_put(c2, r);
		}
		CHECK_EQ(mrcache_destroy(c2), 0);
	}
	CHECK_EQ(test_backend_fini(&tb2), 0);
	return NULL;
}

static int get_missed(char *p)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;

	mrcache_stats_get(cache, &a);
	if (mrcache_get(cache, p, LEN, 0, &r))
		return -1;
	mrcache_put(cache, r);
	mrcache_stats_get(cache, &b);
	return b.misses > a.misses;
}

int main(void)
{
	void *(*fns[])(void *) = { unmapper, user, user, churn };
	pthread_t t[4];
	struct mrcache_config cfg;
	int rc, checked = 0;

	for (int i = 0; i < NBUF; i++) {
		bufs[i] = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(bufs[i] != MAP_FAILED);
	}
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_UFFD);
	rc = mrcache_create(&cfg, &cache);
	if (rc)
		SKIP("monitor uffd cannot start here: %s", strerror(-rc));

	alarm(60);	/* a deadlock fails the test */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, fns[i], NULL), 0);
	sleep(SECONDS);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);

	/* Still watched: cache each buffer, then a raw unmap must be seen
	 * (now MAP_FIXED over it: no hole another thread could fill). */
	for (int i = 0; i < NBUF; i++) {
		if (!bufs[i])
			continue;
		checked++;
		get_missed(bufs[i]);
		CHECK_EQ(get_missed(bufs[i]), 0);
		CHECK(raw_remap(bufs[i], 1) == bufs[i]);
		CHECK_EQ(get_missed(bufs[i]), 1);
	}
	CHECK(checked > 0);
	CHECK_EQ(mrcache_destroy(cache), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	printf("%d s of unmapping against get/put/flush/progress and a second cache: no hang\n",
	       SECONDS);
	return test_result();
}
