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
 */
#ifndef MRC_LRU_H
#define MRC_LRU_H

#include <stdint.h>

struct mrcache_region;

struct mrc_lru {
	struct mrcache_region **heap;
	uint32_t count, capacity;
};

void mrc_lru_init(struct mrc_lru *lru);
void mrc_lru_fini(struct mrc_lru *lru);
int mrc_lru_add(struct mrc_lru *lru, struct mrcache_region *r);
void mrc_lru_remove(struct mrc_lru *lru, struct mrcache_region *r);
/* The least recently used region accepted by `usable`, removed from the
 * heap; NULL when none is.  Regions refused stay in the heap. */
struct mrcache_region *mrc_lru_pop(struct mrc_lru *lru,
				   int (*usable)(const struct mrcache_region *r));

#endif
