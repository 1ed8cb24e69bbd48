/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee through glibc's own unmapping: free() of a large block
 * (glibc munmaps it) followed by a malloc that returns the same address,
 * and free() at the top of the heap (glibc trims the break) followed by a
 * malloc that grows it back.  A later get on the new block misses.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "guarantee.h"

#define MMAPPED_LEN (2ul << 20)
#define TRIM_LEN (1ul << 20)

static int prepare_mmapped(struct guarantee_ctx *c)
{
	/* A fixed threshold: no dynamic raise after the first free. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	c->len = MMAPPED_LEN;
	c->addr = malloc(c->len);
	return c->addr ? 0 : -ENOMEM;
}

/* A free chunk below the test block, kept from merging with the top by a
 * live one (too large for any bin, so carved from the top right after
 * it): the cache's and the monitor's own allocations come from the hole,
 * and the test block stays at the top of the heap.  Returns the guard. */
static void *leave_hole_below_top(void)
{
	void *hole = malloc(512 << 10);
	void *guard = malloc(256 << 10);

	/* Let the compiler see the hole used: it may drop an unused
	 * malloc/free pair. */
	__asm__ volatile("" : : "r"(hole) : "memory");
	free(hole);
	return guard;
}

static int prepare_heap_top(struct guarantee_ctx *c)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 10);
	mallopt(M_TOP_PAD, 0);
	c->aux = leave_hole_below_top();
	c->len = TRIM_LEN;
	c->addr = malloc(c->len);
	return c->addr ? 0 : -ENOMEM;
}

static int realloc_same(struct guarantee_ctx *c)
{
	void *again = malloc(c->len);

	if (again == c->addr)
		return 0;
	snprintf(c->why, sizeof(c->why), "malloc returned %p, not %p", again,
		 c->addr);
	c->addr = again;
	return GUARANTEE_SKIP;
}

static int apply_mmapped(struct guarantee_ctx *c)
{
	free(c->addr);
	return realloc_same(c);
}

static int apply_heap_top(struct guarantee_ctx *c)
{
	uintptr_t end = (uintptr_t)c->addr + c->len;

	free(c->addr);
	if ((uintptr_t)sbrk(0) >= end) {
		snprintf(c->why, sizeof(c->why),
			 "free() did not trim the heap (the block was not on top)");
		c->addr = NULL;
		return GUARANTEE_SKIP;
	}
	return realloc_same(c);
}

static void release(struct guarantee_ctx *c)
{
	free(c->addr);
	free(c->aux);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "free-mmapped", prepare_mmapped, apply_mmapped, release, NULL },
		{ "free-heap-trim", prepare_heap_top, apply_heap_top, release, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
