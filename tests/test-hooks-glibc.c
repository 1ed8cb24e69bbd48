/* SPDX-License-Identifier: MIT */
/*
 * What glibc's allocator unmaps through its internal aliases, which no
 * interposed munmap sees: free() and realloc() of an mmapped block, free()
 * trimming the brk heap, malloc_trim() discarding free pages, and free()
 * shrinking a thread arena's heap.  Each case caches a block, lets glibc
 * give its memory back, gets memory at the same address again, and checks
 * that get misses under hooks (and uffd, which sees it in the kernel).
 * Negative control: under `none` the same get hits.  Every case runs in a
 * fresh child so that glibc's tunables and heap start clean.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define CASE_SKIP 77

struct gcase {
	const char *name;
	/* Allocate, cache with get(), free, reallocate at the same address;
	 * returns that address (or NULL to skip, with *why set). */
	void *(*run)(struct mrcache *c, size_t *len, const char **why);
};

static void cache_it(struct mrcache *c, void *p, size_t len)
{
	struct mrcache_region *r;

	CHECK_EQ(mrcache_get(c, p, len, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
}

static void *same_again(void *p, size_t len, const char **why)
{
	void *q = malloc(len);

	if (q != p) {
		*why = "malloc did not return the same address";
		return NULL;
	}
	memset(q, 1, len);
	return q;
}

static void *free_mmapped(struct mrcache *c, size_t *len, const char **why)
{
	void *p;

	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	*len = 2 << 20;
	p = malloc(*len);
	memset(p, 1, *len);
	cache_it(c, p, *len);
	free(p);
	return same_again(p, *len, why);
}

static void *realloc_mmapped(struct mrcache *c, size_t *len, const char **why)
{
	char *p, *q, *blocker;
	volatile uintptr_t old;	/* volatile: gcc's use-after-free check */

	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	*len = 2 << 20;
	p = malloc(*len);
	memset(p, 1, *len);
	/* A mapping right after the block makes realloc move it. */
	blocker = mmap(p + *len, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_FIXED_NOREPLACE, -1, 0);
	cache_it(c, p, *len);
	old = (uintptr_t)p;
	q = realloc(p, 8 << 20);
	if (blocker != MAP_FAILED)
		munmap(blocker, 4096);
	if ((uintptr_t)q == old) {
		*why = "realloc grew the block in place";
		return NULL;
	}
	/* Fresh memory at the old (page-aligned) address. */
	p = mmap((void *)(old & ~4095ul), *len + 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED) {
		*why = "the moved block took part of the old address";
		return NULL;
	}
	return (void *)old;
}

/* A free chunk below the block, kept from the top by a small live one:
 * the cache's own small allocations come from it, not from the top. */
static void *keep[2];

static void hole_below_top(void)
{
	void *hole = malloc(512 << 10);

	/* Small requests may come from anywhere below: keep asking until
	 * one comes from above the hole (the top); the others leak. */
	for (int i = 0; i < 10000; i++) {
		keep[0] = malloc(16);
		if ((uintptr_t)keep[0] > (uintptr_t)hole)
			break;
	}
	free(hole);
}

/* Cache a page of the brk heap first: the cache's index grows its nodes
 * for heap addresses now, not from the top after the case's block. */
static void warm_heap_index(struct mrcache *c)
{
	cache_it(c, keep[0], 16);
}

static void *heap_trim(struct mrcache *c, size_t *len, const char **why)
{
	void *p;
	uintptr_t end;

	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
	mallopt(M_TOP_PAD, 0);
	hole_below_top();
	warm_heap_index(c);
	*len = 1 << 20;
	p = malloc(*len);
	memset(p, 1, *len);
	cache_it(c, p, *len);
	end = (uintptr_t)p + *len;
	free(p);
	if ((uintptr_t)sbrk(0) >= end) {
		*why = "free() did not trim the heap";
		return NULL;
	}
	return same_again(p, *len, why);
}

static void *trim_call(struct mrcache *c, size_t *len, const char **why)
{
	void *p;

	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);	/* only malloc_trim() trims */
	hole_below_top();
	warm_heap_index(c);
	*len = 1 << 20;
	p = malloc(*len);
	keep[1] = malloc(16);	/* keeps p off the top: only malloc_trim discards it */
	memset(p, 1, *len);
	cache_it(c, p, *len);
	free(p);
	if (!malloc_trim(0)) {
		*why = "malloc_trim() released nothing";
		return NULL;
	}
	return same_again(p, *len, why);
}

struct arena_job {
	struct mrcache *c;
	size_t len;
	const char *why;
	void *again;
};

static void *arena_thread(void *arg)
{
	struct arena_job *j = arg;
	void *p = malloc(j->len);

	memset(p, 1, j->len);
	cache_it(j->c, p, j->len);
	free(p);
	j->again = same_again(p, j->len, &j->why);
	return NULL;
}

static void *thread_arena_trim(struct mrcache *c, size_t *len, const char **why)
{
	struct arena_job j = { .c = c, .len = 1 << 20 };
	pthread_t t;

	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
	mallopt(M_TOP_PAD, 0);
	*len = j.len;
	free(malloc(16));	/* the main arena exists: the thread gets its own */
	pthread_create(&t, NULL, arena_thread, &j);
	pthread_join(t, NULL);
	*why = j.why;
	return j.again;
}

static const struct gcase cases[] = {
	{ "free-mmapped", free_mmapped },
	{ "realloc-mmapped", realloc_mmapped },
	{ "free-heap-trim", heap_trim },
	{ "malloc-trim", trim_call },
	{ "thread-arena-trim", thread_arena_trim },
};

static int child(const struct gcase *gc, enum mrcache_monitor_kind m)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_stats a, b;
	struct mrcache *c;
	const char *why = NULL;
	size_t len = 0;
	void *p, *warm;
	int rc, missed;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		printf("  %-18s %-5s SKIP (cannot start: %s)\n", gc->name,
		       mrcache_monitor_name(m), strerror(-rc));
		fflush(stdout);
		return CASE_SKIP;
	}
	/* The cache's first allocations (index nodes, region slab) happen
	 * now, not after the case's block. */
	warm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cache_it(c, warm, 4096);
	p = gc->run(c, &len, &why);
	if (!p) {
		printf("  %-18s %-5s SKIP (%s)\n", gc->name, mrcache_monitor_name(m), why);
		fflush(stdout);
		return CASE_SKIP;
	}
	mrcache_stats_get(c, &a);
	cache_it(c, p, len);
	mrcache_stats_get(c, &b);
	missed = b.misses > a.misses;
	rc = missed == (m != MRCACHE_MONITOR_NONE);
	printf("  %-18s %-5s %s (%s)\n", gc->name, mrcache_monitor_name(m),
	       rc ? "PASS" : "FAIL", missed ? "miss" : "hit");
	fflush(stdout);
	return rc && !test_failures ? 0 : 1;
}

int main(void)
{
	static const enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
	};
	int failed = 0, passed_hooks = 0;

#ifdef TEST_SANITIZED
	SKIP("malloc is the sanitizer's here, not glibc's: nothing of glibc's to check");
#endif

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (size_t k = 0; k < sizeof(monitors) / sizeof(monitors[0]); k++) {
			int status;
			pid_t pid;

			fflush(stdout);
			pid = fork();
			if (pid == 0)
				_exit(child(&cases[i], monitors[k]));
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
				printf("  %s: child crashed\n", cases[i].name);
				failed++;
				continue;
			}
			if (WEXITSTATUS(status) == 1)
				failed++;
			else if (WEXITSTATUS(status) == 0 && monitors[k] == MRCACHE_MONITOR_HOOKS)
				passed_hooks++;
		}
	}
	if (failed)
		return 1;
	if (!passed_hooks)
		SKIP("no case could run under hooks");
	return 0;
}
