/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee: sbrk shrinking the heap over a cached range, then
 * growing it back (fresh zero pages at the same addresses); a later get
 * misses.  malloc is first given a large top chunk it keeps, so it does
 * not move the break itself while the test owns the top of the heap.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "guarantee.h"

#define LEN (64 * 1024)
#define PAGE 4096ul

static int prepare(struct guarantee_ctx *c)
{
	uintptr_t cur = (uintptr_t)sbrk(0);
	uintptr_t pad = -cur & (PAGE - 1);

	if (cur == (uintptr_t)-1 || sbrk((intptr_t)pad) == (void *)-1)
		return -ENOMEM;
	c->addr = sbrk(LEN);
	if (c->addr == (void *)-1)
		return -ENOMEM;
	c->len = LEN;
	return 0;
}

static int ours_on_top(struct guarantee_ctx *c)
{
	return sbrk(0) == (char *)c->addr + c->len;
}

static int apply(struct guarantee_ctx *c)
{
	if (!ours_on_top(c)) {
		snprintf(c->why, sizeof(c->why), "malloc moved the break meanwhile");
		return GUARANTEE_SKIP;
	}
	if (sbrk(-(intptr_t)c->len) == (void *)-1)
		return -errno;
	return sbrk((intptr_t)c->len) == c->addr ? 0 : -EADDRINUSE;
}

static void release(struct guarantee_ctx *c)
{
	if (ours_on_top(c))
		sbrk(-(intptr_t)c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "brk-shrink", prepare, apply, release, NULL },
	};

	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	free(malloc(16 << 20));
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
