/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee through glibc's own unmapping: free() of a large block
 * (glibc munmaps it) followed by a malloc that returns the same address,
 * free() at the top of the heap (glibc trims the break) followed by a
 * malloc that grows it back, and realloc() shrinking a large block (glibc
 * mremaps it smaller) with fresh memory then mapped over the cut tail.  A
 * later get on the range misses.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "guarantee.h"

#define MMAPPED_LEN (2ul << 20)
#define TRIM_LEN (1ul << 20)
#define PAGE 4096ul

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

/* The first unmapped page in [from, to), or NULL. */
static char *first_hole(char *from, char *to)
{
	unsigned char vec;

	for (char *p = from; p < to; p += PAGE)
		if (mincore(p, PAGE, &vec) && errno == ENOMEM)
			return p;
	return NULL;
}

static int apply_realloc_shrink(struct guarantee_ctx *c)
{
	uintptr_t old = (uintptr_t)c->addr;
	char *page0 = (char *)(old & ~(PAGE - 1));
	char *end = (char *)((old + c->len + PAGE - 1) & ~(PAGE - 1));
	void *shrunk = realloc(c->addr, c->len / 2);
	char *tail;

	if (!shrunk)
		return -ENOMEM;
	if ((uintptr_t)shrunk != old) {
		snprintf(c->why, sizeof(c->why), "realloc moved the block");
		c->addr = shrunk;
		return GUARANTEE_SKIP;
	}
	tail = first_hole(page0, end);
	if (!tail) {
		snprintf(c->why, sizeof(c->why), "realloc kept every page");
		return GUARANTEE_SKIP;
	}
	c->aux = tail;
	c->aux_len = (size_t)(end - tail);
	return guarantee_map(tail, c->aux_len, 0) ? 0 : -EADDRINUSE;
}

static void release_realloced(struct guarantee_ctx *c)
{
	free(c->addr);
	if (c->aux)
		munmap(c->aux, c->aux_len);
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
		{ "realloc-shrink", prepare_mmapped, apply_realloc_shrink,
		  release_realloced, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
