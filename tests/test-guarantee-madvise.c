/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee: madvise DONTNEED (private memory, all of it or one
 * page), REMOVE (shared
 * memory) and FREE discard a cached range's pages; a later get misses.
 * MADV_FREE never frees pages that are pinned, so a stale registration
 * still sees the same pages: there the negative control is the hit alone.
 */
#include <errno.h>
#include <sys/mman.h>
#include "guarantee.h"

static int advise(struct guarantee_ctx *c, int advice)
{
	return madvise(c->addr, c->len, advice) ? -errno : 0;
}

static int apply_dontneed(struct guarantee_ctx *c)
{
	return advise(c, MADV_DONTNEED);
}

static int apply_dontneed_page(struct guarantee_ctx *c)
{
	return madvise((char *)c->addr + 3 * 4096, 4096, MADV_DONTNEED) ? -errno : 0;
}

static int apply_free(struct guarantee_ctx *c)
{
	return advise(c, MADV_FREE);
}

static int apply_remove(struct guarantee_ctx *c)
{
	return advise(c, MADV_REMOVE);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "madv-dontneed", guarantee_prepare_private, apply_dontneed,
		  guarantee_release_maps, NULL },
		{ "madv-dontneed-page", guarantee_prepare_private,
		  apply_dontneed_page, guarantee_release_maps, NULL },
		{ "madv-remove", guarantee_prepare_shared, apply_remove,
		  guarantee_release_maps, NULL },
		{ "madv-free", guarantee_prepare_private, apply_free,
		  guarantee_release_maps,
		  "hit: pinned pages survive MADV_FREE, nothing to catch" },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
