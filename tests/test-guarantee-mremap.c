/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee for mremap: moving a cached range away (then mapping
 * fresh memory there), moving other memory onto it, shrinking it (then
 * mapping fresh memory over the cut tail), growing it where it cannot grow
 * in place (so it moves), and MREMAP_DONTUNMAP (the pages move, the range
 * stays mapped but empty).  A later get misses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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

static int apply_grow_move(struct guarantee_ctx *c)
{
	char *end = (char *)c->addr + c->len;
	void *blocker = guarantee_map(end, 4096, 0);
	void *moved;

	/* Without a blocker the range may grow in place (nothing moves). */
	moved = mremap(c->addr, c->len, 2 * c->len, MREMAP_MAYMOVE);
	if (blocker)
		munmap(blocker, 4096);
	if (moved == MAP_FAILED)
		return -errno;
	c->aux = moved;
	c->aux_len = 2 * c->len;
	if (moved == c->addr) {
		snprintf(c->why, sizeof(c->why), "the range grew in place");
		c->len = c->aux_len;
		c->aux = NULL;
		return GUARANTEE_SKIP;
	}
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static int apply_dontunmap(struct guarantee_ctx *c)
{
	void *moved = mremap(c->addr, c->len, c->len,
			     MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);

	if (moved == MAP_FAILED) {
		snprintf(c->why, sizeof(c->why), "MREMAP_DONTUNMAP: %s",
			 strerror(errno));
		return GUARANTEE_SKIP;
	}
	c->aux = moved;
	c->aux_len = c->len;
	return 0;
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
		{ "mremap-grow-move", guarantee_prepare_private, apply_grow_move,
		  guarantee_release_maps, NULL },
		{ "mremap-dontunmap", guarantee_prepare_private, apply_dontunmap,
		  guarantee_release_maps, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
