/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee for mremap: moving a cached range away (then mapping
 * fresh memory there), moving other memory onto it, and shrinking it (then
 * mapping fresh memory over the cut tail).  A later get misses.
 */
#include <errno.h>
#include <sys/mman.h>
#include "guarantee.h"

static int move(void *from, void *to, size_t len)
{
	void *p = mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);

	return p == to ? 0 : -errno;
}

static int apply_move_away(struct guarantee_ctx *c)
{
	c->aux_len = c->len;
	c->aux = guarantee_map(NULL, c->len, 0);
	if (!c->aux)
		return -errno;
	if (move(c->addr, c->aux, c->len))
		return -errno;
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static int apply_move_onto(struct guarantee_ctx *c)
{
	void *fresh = guarantee_map(NULL, c->len, 0);

	if (!fresh)
		return -errno;
	return move(fresh, c->addr, c->len);
}

static int apply_shrink(struct guarantee_ctx *c)
{
	size_t half = c->len / 2;

	if (mremap(c->addr, c->len, half, 0) != c->addr)
		return -errno;
	return guarantee_map((char *)c->addr + half, half, 0) ? 0 : -EADDRINUSE;
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "mremap-move-away", guarantee_prepare_private, apply_move_away,
		  guarantee_release_maps, NULL },
		{ "mremap-move-onto", guarantee_prepare_private, apply_move_onto,
		  guarantee_release_maps, NULL },
		{ "mremap-shrink", guarantee_prepare_private, apply_shrink,
		  guarantee_release_maps, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
