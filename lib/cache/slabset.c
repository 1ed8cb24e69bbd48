/* SPDX-License-Identifier: MIT */
/* slabset.c - see slabset.h. */
#include "cache/region.h"
#include "cache/slabset.h"

void *mrc_slabset_add(struct mrc_slabset *s)
{
	struct mrc_arena *a = &s->arena;
	size_t offset = s->count * REGION_SLAB_BYTES;

	/* Reserved at the first slab: a cache that never holds a region
	 * costs no address space. */
	if (!a->base && mrc_arena_reserve(a, MRC_SLABSET_RESERVE, MRC_SLABSET_RESERVE_MIN,
					  REGION_SLAB_BYTES))
		return NULL;
	if (mrc_arena_grow(a, offset + REGION_SLAB_BYTES))
		return NULL;
	s->count++;
	return a->base + offset;
}

void mrc_slabset_fini(struct mrc_slabset *s)
{
	mrc_arena_release(&s->arena);
	s->count = 0;
}
