/* SPDX-License-Identifier: MIT */
/* Monitor guarantee: mmap(MAP_FIXED) over a cached range (all of it, or
 * one page inside) replaces its pages; a later get misses. */
#include <errno.h>
#include <sys/mman.h>
#include "guarantee.h"

#define LEN (64 * 1024)
#define PAGE 4096

static int prepare(struct guarantee_ctx *c)
{
	c->len = LEN;
	c->addr = guarantee_map(NULL, LEN, 0);
	return c->addr ? 0 : -errno;
}

static int map_over(void *at, size_t len)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	return p == at ? 0 : -errno;
}

static int apply_whole(struct guarantee_ctx *c)
{
	return map_over(c->addr, c->len);
}

static int apply_page(struct guarantee_ctx *c)
{
	return map_over((char *)c->addr + 3 * PAGE, PAGE);
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "mmap-fixed", prepare, apply_whole, release, NULL },
		{ "mmap-fixed-page", prepare, apply_page, release, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
