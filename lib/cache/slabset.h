/* SPDX-License-Identifier: MIT */
/*
 * slabset.h - one cache's region slabs, side by side in one arena
 * (arena.h): is this pointer one of our slabs?  Two compares, and it never
 * dereferences the pointer asked about, so a pointer into no slab at all
 * (another cache's, garbage, unmapped) is answered safely.
 *
 * Slabs are handed out from the bottom of the arena up and never move or
 * go back before mrc_slabset_fini(); adds run under the cache lock,
 * lookups anywhere (mrcache_put takes no lock).  A reader may miss a slab
 * added concurrently, which is harmless: a region of it reached the
 * reader only through the get that added the slab, and that get's unlock
 * orders the publication before the reader.
 */
#ifndef MRC_SLABSET_H
#define MRC_SLABSET_H

#include "cache/arena.h"

/* Address space for one cache's slabs: 524,288 slabs, 178 million
 * regions; only what is used is ever backed.  Under an address-space
 * limit, less (down to 64 MiB, 698,368 regions), and that many regions
 * is then the most the cache can hold (a miss beyond gets -ENOMEM).
 * With pages larger than a slab, a slab may share its page with the next. */
#define MRC_SLABSET_RESERVE	(16ull << 30)
#define MRC_SLABSET_RESERVE_MIN	(64ull << 20)

struct mrc_slabset {
	struct mrc_arena arena;
	size_t count;		/* slabs handed out; under the cache lock */
};

/* A new zeroed slab (aligned to REGION_SLAB_BYTES), or NULL when out of
 * memory or address space. */
void *mrc_slabset_add(struct mrc_slabset *s);

static inline int mrc_slabset_has(const struct mrc_slabset *s, const void *slab)
{
	return mrc_arena_holds(&s->arena, slab);
}

/* Unmap every slab. */
void mrc_slabset_fini(struct mrc_slabset *s);

#endif
