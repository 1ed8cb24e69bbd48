/* SPDX-License-Identifier: MIT */
/*
 * Allocation failures inside the library: the n-th allocation fails, for
 * every n until a whole scenario runs without reaching it.  Every call
 * returns 0 or -ENOMEM, the cache stays usable, and at the end nothing is
 * registered and every byte the library allocated is freed (counted here;
 * LeakSanitizer checks it again in the ASan build).  The library's calls to
 * malloc and friends are redirected here with ld --wrap (mk/fault.mk).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
void __wrap_free(void *p);

static long countdown = -1;	/* fail when it reaches 0; -1: never */
static long outstanding;	/* live allocations made through the wraps */
static long injected;

static int should_fail(void)
{
	if (countdown < 0)
		return 0;
	if (countdown-- == 0) {
		injected++;
		return 1;
	}
	return 0;
}

void *__wrap_malloc(size_t n)
{
	void *p = should_fail() ? NULL : __real_malloc(n);

	outstanding += p != NULL;
	return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
	void *p = should_fail() ? NULL : __real_calloc(n, m);

	outstanding += p != NULL;
	return p;
}

void *__wrap_aligned_alloc(size_t a, size_t n)
{
	void *p = should_fail() ? NULL : __real_aligned_alloc(a, n);

	outstanding += p != NULL;
	return p;
}

void *__wrap_realloc(void *p, size_t n)
{
	void *q;

	if (should_fail())
		return NULL;
	q = __real_realloc(p, n);
	outstanding += p == NULL && q != NULL;
	return q;
}

void __wrap_free(void *p)
{
	outstanding -= p != NULL;
	__real_free(p);
}

#define P 4096

static int ok_or_nomem(int rc)
{
	return rc >= 0 || rc == -ENOMEM;
}

/* Returns 1 when the injected failure was reached. */
static int scenario(char *buf, long fail_at)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c = NULL;
	struct mrcache_region *held[40];
	int nheld = 0, rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.max_regions = 16;
	injected = 0;
	countdown = fail_at;
	rc = mrcache_create(&cfg, &c);
	CHECK(ok_or_nomem(rc));
	if (rc == 0) {
		/* Regions across many 2 MiB windows (index nodes), merges,
		 * evictions (heap growth), invalidation and flush. */
		for (int i = 0; i < 40; i++) {
			struct mrcache_region *r;
			char *addr = buf + (size_t)(i % 20) * (1u << 21) + (size_t)(i % 3) * P;

			rc = mrcache_get(c, addr, 2 * P, 0, &r);
			CHECK(ok_or_nomem(rc));
			if (rc == 0 && i % 4 == 0)
				held[nheld++] = r;
			else if (rc == 0)
				CHECK_EQ(mrcache_put(c, r), 0);
		}
		CHECK(ok_or_nomem(mrcache_invalidate(c, buf, 4 * P)));
		for (int i = 0; i < nheld; i++)
			CHECK_EQ(mrcache_put(c, held[i]), 0);
		CHECK(ok_or_nomem(mrcache_flush(c)));
		countdown = -1;
		/* Still consistent: a get works once memory is back. */
		{
			struct mrcache_region *r;

			CHECK_EQ(mrcache_get(c, buf, P, 0, &r), 0);
			CHECK_EQ(mrcache_put(c, r), 0);
		}
		CHECK_EQ(mrcache_destroy(c), 0);
	}
	countdown = -1;
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return injected > 0;
}

int main(void)
{
	char *buf = mmap(NULL, 41u << 20, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	long base, n;

	/* The scenario without failures: nothing may stay allocated. */
	base = outstanding;
	scenario(buf, -1);
	CHECK_EQ(outstanding, base);
	for (n = 0; n < 10000; n++) {
		base = outstanding;
		if (!scenario(buf, n))
			break;
		if (outstanding != base) {
			fprintf(stderr, "allocation %ld failing leaked %ld allocations\n",
				n, outstanding - base);
			test_failures++;
		}
	}
	printf("injected failures at allocations 0..%ld\n", n - 1);
	CHECK(n > 5);		/* the scenario does allocate inside the library */
	return test_result();
}
