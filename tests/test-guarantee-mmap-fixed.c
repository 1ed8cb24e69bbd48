/* SPDX-License-Identifier: MIT */
/* Monitor guarantee: mmap(MAP_FIXED) over a cached range (all of it, or
 * one page inside) replaces its pages; a later get misses. */
#include <errno.h>
#include <sys/mman.h>
#include "guarantee.h"

#define PAGE 4096

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

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "mmap-fixed", guarantee_prepare_private, apply_whole,
		  guarantee_release_maps, NULL },
		{ "mmap-fixed-page", guarantee_prepare_private, apply_page,
		  guarantee_release_maps, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
