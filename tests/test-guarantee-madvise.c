/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee: madvise DONTNEED (private memory), REMOVE (shared
 * memory) and FREE discard a cached range's pages; a later get misses.
 * MADV_FREE never frees pages that are pinned, so a stale registration
 * still sees the same pages: there the negative control is the hit alone.
 */
#include <errno.h>
#include <sys/mman.h>
#include "guarantee.h"

#define LEN (64 * 1024)

static int prepare_private(struct guarantee_ctx *c)
{
	c->len = LEN;
	c->addr = guarantee_map(NULL, LEN, 0);
	return c->addr ? 0 : -errno;
}

static int prepare_shared(struct guarantee_ctx *c)
{
	c->len = LEN;
	c->addr = guarantee_map(NULL, LEN, 1);
	return c->addr ? 0 : -errno;
}

static int advise(struct guarantee_ctx *c, int advice)
{
	return madvise(c->addr, c->len, advice) ? -errno : 0;
}

static int apply_dontneed(struct guarantee_ctx *c)
{
	return advise(c, MADV_DONTNEED);
}

static int apply_free(struct guarantee_ctx *c)
{
	return advise(c, MADV_FREE);
}

static int apply_remove(struct guarantee_ctx *c)
{
	return advise(c, MADV_REMOVE);
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "madv-dontneed", prepare_private, apply_dontneed, release, NULL },
		{ "madv-remove", prepare_shared, apply_remove, release, NULL },
		{ "madv-free", prepare_private, apply_free, release,
		  "negative control: hit; pinned pages survive MADV_FREE" },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
