/* SPDX-License-Identifier: MIT */
/* Monitor guarantee: after munmap (whole or one page inside) returns and
 * fresh memory takes the addresses, a get misses and sees fresh data. */
#include <errno.h>
#include <sys/mman.h>
#include "guarantee.h"

#define PAGE 4096

static int apply_whole(struct guarantee_ctx *c)
{
	if (munmap(c->addr, c->len))
		return -errno;
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static int apply_page(struct guarantee_ctx *c)
{
	char *page = (char *)c->addr + 5 * PAGE;

	if (munmap(page, PAGE))
		return -errno;
	return guarantee_map(page, PAGE, 0) ? 0 : -EADDRINUSE;
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "munmap", guarantee_prepare_private, apply_whole,
		  guarantee_release_maps, NULL },
		{ "munmap-one-page", guarantee_prepare_private, apply_page,
		  guarantee_release_maps, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
