/* SPDX-License-Identifier: MIT */
/*
 * lru.h - least-recently-used order, exact to an epoch, without a lock or
 * a shared write per hit.
 *
 * A put stores the cache's LRU epoch in its region (region->last_use,
 * relaxed) when it differs; the epoch advances at every miss and eviction
 * (cache.c: region_touch, lru_tick), so the stamps order the regions by
 * the epoch of their last put and a region put over and over within one
 * epoch is written once.  The LRU is a binary min-heap of cached regions keyed by the stamp they
 * had when they were last placed in the heap.  To find the victim, pop the
 * minimum; if its last_use moved on since it was placed, re-place it with
 * the new stamp and pop again.  The first region whose stamp is current is
 * least recently used one to within an epoch: every other region's
 * last_use is at least its heap key, which is at least this one's; regions
 * of equal stamps come out in no particular order.  All operations run
 * under the cache lock.
 *
 * Keys live in the heap entries, beside the region ids, so a sift compares
 * entries of one array and touches a region only to note its new position.
 * A removal (invalidation, merge: the common case, in bulk during reclaim)
 * leaves a hole, an entry with no region, at O(1): holes keep their
 * key, so the heap order holds; pops discard the holes they reach, and the
 * next add rebuilds the heap without them once they are half of it.
 */
#ifndef MRC_LRU_H
#define MRC_LRU_H

#include <stdint.h>
#include "cache/arena.h"
#include "cache/region.h"
#include "cache/slabset.h"

/* An entry names its region by its place in the cache's slab arena
 * (slabset.h), in units of a region: 12 bytes an entry instead of 16.
 * Packed to 4 bytes: the key is only ever read whole, under the lock. */
struct mrc_lru_entry {
	uint64_t key;			/* the region's last_use when placed */
	uint32_t id;			/* MRC_LRU_HOLE: left by a removal */
} __attribute__((packed, aligned(4)));

#define MRC_LRU_HOLE	UINT32_MAX

/* The heap array lives in an arena too: a growth moves nothing and leaves
 * no freed copy behind, and its resident pages are the used ones.  It is
 * reserved at the first add, when the slab arena exists, with room for
 * twice an entry per region the slabs can hold (the capacity doubles). */
_Static_assert(MRC_SLABSET_RESERVE / sizeof(struct mrcache_region) < MRC_LRU_HOLE,
	       "every region of the slab arena has an id");

struct mrc_lru {
	struct mrc_arena arena;
	struct mrc_lru_entry *heap;	/* arena.base */
	uint32_t count, capacity;	/* entries, holes included */
	uint32_t holes;
	const struct mrc_arena *regions;	/* the slabs' arena: ids count from its base */
};

void mrc_lru_init(struct mrc_lru *lru, const struct mrc_slabset *slabs);
void mrc_lru_fini(struct mrc_lru *lru);
int mrc_lru_add(struct mrc_lru *lru, struct mrcache_region *r);
/* Drop the holes at the end of the heap (after mrc_lru_remove() of its
 * last entry). */
void mrc_lru_trim(struct mrc_lru *lru);
/* The least recently used region accepted by `usable`, removed from the
 * heap; NULL when none is.  Regions refused stay in the heap. */
struct mrcache_region *mrc_lru_pop(struct mrc_lru *lru,
				   int (*usable)(const struct mrcache_region *r, void *arg),
				   void *arg);
static inline struct mrcache_region *mrc_lru_region(const struct mrc_lru *lru, uint32_t id)
{
	if (id == MRC_LRU_HOLE)
		return NULL;
	return (struct mrcache_region *)lru->regions->base + id;
}

#define MRC_LRU_NOT_IN_HEAP UINT32_MAX	/* region_cold()->lru_pos of a region outside it */

static inline uint32_t mrc_lru_id(const struct mrc_lru *lru, const struct mrcache_region *r)
{
	return (uint32_t)(r - (const struct mrcache_region *)lru->regions->base);
}

/* Leave a hole where r's entry was (nothing if r is not in the heap).
 * Inline: a reclaim removes thousands of regions at a time, and the
 * caller's region_cold(r) serves here too.  A removal moves no entry, so
 * a walk over the entries (mrc_lru_at) may remove the region it is at. */
static inline void mrc_lru_remove(struct mrc_lru *lru, struct mrcache_region *r)
{
	struct region_cold *cold = region_cold(r);
	uint32_t pos = cold->lru_pos;

	/* MRC_LRU_NOT_IN_HEAP is never below count. */
	if (pos >= lru->count || lru->heap[pos].id != mrc_lru_id(lru, r))
		return;
	cold->lru_pos = MRC_LRU_NOT_IN_HEAP;
	lru->heap[pos].id = MRC_LRU_HOLE;
	lru->holes++;
	if (pos == lru->count - 1)
		mrc_lru_trim(lru);
}

/* The region of entry i (0 <= i < count), NULL for a hole: a walk over
 * every cached region, in no order. */
static inline struct mrcache_region *mrc_lru_at(const struct mrc_lru *lru, uint32_t i)
{
	return mrc_lru_region(lru, lru->heap[i].id);
}

#endif
