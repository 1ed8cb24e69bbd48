/* SPDX-License-Identifier: MIT */
/*
 * slabset.h - the set of one cache's region slabs: is this pointer one of
 * our regions?  O(1), and it never dereferences the pointer asked about,
 * so a pointer into no slab at all (another cache's, garbage, unmapped)
 * is answered safely.
 *
 * An open-addressing hash set of slab addresses that only grows.  Adds
 * run under the cache lock; lookups run anywhere, without it (mrcache_put
 * takes no lock).  A growth publishes a new table and keeps the old ones
 * until mrc_slabset_fini(), so a reader still probing an old table reads
 * valid memory (all tables together are at most twice the newest).  A
 * reader may miss a slab added concurrently, which is harmless: a region
 * of it reached the reader only through the get that added the slab, and
 * that get's unlock orders the publication before the reader.
 */
#ifndef MRC_SLABSET_H
#define MRC_SLABSET_H

#include <stddef.h>
#include <stdint.h>

struct mrc_slabset_table {
	struct mrc_slabset_table *older;	/* kept for readers, freed at fini */
	size_t mask;				/* slots - 1, a power of two minus 1 */
	uintptr_t slot[];			/* atomic; 0: empty */
};

struct mrc_slabset {
	struct mrc_slabset_table *table;	/* atomic: the newest */
	size_t count;				/* under the cache lock */
};

/* Add a slab (aligned to REGION_SLAB_BYTES).  0 or -ENOMEM. */
int mrc_slabset_add(struct mrc_slabset *s, const void *slab);
int mrc_slabset_has(const struct mrc_slabset *s, const void *slab);
/* Call f on every slab (no concurrent add), then free the set itself. */
void mrc_slabset_fini(struct mrc_slabset *s, void (*f)(void *slab));

#endif
