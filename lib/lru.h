/* SPDX-License-Identifier: MIT */
/*
 * lru.h - exact least-recently-used order without a lock on the hit path.
 *
 * A hit only stores a timestamp in its region (region->last_use, relaxed).
 * The LRU is a binary min-heap of cached regions keyed by the stamp they
 * had when they were last placed in the heap.  To find the victim, pop the
 * minimum; if its last_use moved on since it was placed, re-place it with
 * the new stamp and pop again.  The first region whose stamp is current is
 * the exact least recently used one: every other region's last_use is at
 * least its heap key, which is at least this one's.  All operations run
 * under the cache lock.
 *
 * Keys live in the heap entries, beside the pointers, so a sift compares
 * entries of one array and touches a region only to note its new position.
 * A removal (invalidation, merge: the common case, in bulk during reclaim)
 * leaves a hole, an entry whose region is NULL, at O(1): holes keep their
 * key, so the heap order holds; pops discard the holes they reach, and the
 * heap is rebuilt without them once they are half of it.
 */
#ifndef MRC_LRU_H
#define MRC_LRU_H

#include <stdint.h>

struct mrcache_region;

struct mrc_lru_entry {
	uint64_t key;			/* the region's last_use when placed */
	struct mrcache_region *r;	/* NULL: a hole left by a removal */
};

struct mrc_lru {
	struct mrc_lru_entry *heap;
	uint32_t count, capacity;	/* entries, holes included */
	uint32_t holes;
};

void mrc_lru_init(struct mrc_lru *lru);
void mrc_lru_fini(struct mrc_lru *lru);
int mrc_lru_add(struct mrc_lru *lru, struct mrcache_region *r);
void mrc_lru_remove(struct mrc_lru *lru, struct mrcache_region *r);
/* The least recently used region accepted by `usable`, removed from the
 * heap; NULL when none is.  Regions refused stay in the heap. */
struct mrcache_region *mrc_lru_pop(struct mrc_lru *lru,
				   int (*usable)(const struct mrcache_region *r));
/* The region of entry i (0 <= i < count), NULL for a hole: a walk over
 * every cached region, in no order. */
static inline struct mrcache_region *mrc_lru_at(const struct mrc_lru *lru, uint32_t i)
{
	return lru->heap[i].r;
}

#endif
