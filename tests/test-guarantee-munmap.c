/* SPDX-License-Identifier: MIT */
/* Monitor guarantee: after munmap (whole or one page inside) returns and
 * fresh memory takes the addresses, a get misses and sees fresh data. */
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

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "munmap", prepare, apply_whole, release, NULL },
		{ "munmap-one-page", prepare, apply_page, release, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
