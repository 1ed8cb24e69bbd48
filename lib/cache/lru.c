/* SPDX-License-Identifier: MIT */
/* lru.c - the min-heap behind mrc_lru_* (see lru.h). */
#include <errno.h>
#include <string.h>
#include "cache/lru.h"
#include "cache/region.h"

void mrc_lru_init(struct mrc_lru *lru, const struct mrc_slabset *slabs)
{
	memset(lru, 0, sizeof(*lru));
	lru->regions = &slabs->arena;
}

void mrc_lru_fini(struct mrc_lru *lru)
{
	mrc_arena_release(&lru->arena);
	lru->heap = NULL;
	lru->count = lru->capacity = lru->holes = 0;
}

/* Entries the heap may ever need: two per region of the slab arena (at
 * most 357 million: a uint32_t capacity).  Under an address-space limit
 * the reservation may be smaller, and so the cache's capacity. */
static size_t heap_bytes_max(const struct mrc_lru *lru)
{
	return lru->regions->reserved / REGION_SLAB_BYTES * REGION_SLAB_REGIONS * 2 *
	       sizeof(struct mrc_lru_entry);
}

/* Twice the room (reserved at the first add).  Growing only makes more
 * of the arena usable: pages the heap never reaches are never resident. */
static int grow(struct mrc_lru *lru)
{
	size_t cap = lru->capacity ? 2 * (size_t)lru->capacity : 4096 / sizeof(*lru->heap);
	size_t max;

	if (!lru->arena.base &&
	    mrc_arena_reserve(&lru->arena, heap_bytes_max(lru), 1u << 20, 4096))
		return -ENOMEM;
	max = lru->arena.reserved / sizeof(*lru->heap);
	if (cap > max)
		cap = max;
	if (cap <= lru->capacity || mrc_arena_grow(&lru->arena, cap * sizeof(*lru->heap)))
		return -ENOMEM;
	lru->heap = (struct mrc_lru_entry *)lru->arena.base;
	lru->capacity = (uint32_t)cap;
	return 0;
}

static void place(struct mrc_lru *lru, uint32_t pos, struct mrc_lru_entry e)
{
	lru->heap[pos] = e;
	if (e.id != MRC_LRU_HOLE)
		region_cold(mrc_lru_region(lru, e.id))->lru_pos = pos;
}

static void sift_up(struct mrc_lru *lru, uint32_t pos)
{
	struct mrc_lru_entry e = lru->heap[pos];

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (lru->heap[parent].key <= e.key)
			break;
		place(lru, pos, lru->heap[parent]);
		pos = parent;
	}
	place(lru, pos, e);
}

static void sift_down(struct mrc_lru *lru, uint32_t pos)
{
	struct mrc_lru_entry e = lru->heap[pos];

	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= lru->count)
			break;
		if (child + 1 < lru->count && lru->heap[child + 1].key < lru->heap[child].key)
			child++;
		if (e.key <= lru->heap[child].key)
			break;
		place(lru, pos, lru->heap[child]);
		pos = child;
	}
	place(lru, pos, e);
}

/* Drop the root: the last entry takes its place. */
static void remove_root(struct mrc_lru *lru)
{
	if (--lru->count > 0) {
		place(lru, 0, lru->heap[lru->count]);
		sift_down(lru, 0);
	}
}

/* Squeeze the holes out and restore the heap order: O(count). */
static void compact(struct mrc_lru *lru)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < lru->count; i++)
		if (lru->heap[i].id != MRC_LRU_HOLE)
			lru->heap[n++] = lru->heap[i];
	lru->count = n;
	lru->holes = 0;
	for (uint32_t i = 0; i < n; i++)
		region_cold(mrc_lru_at(lru, i))->lru_pos = i;
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(lru, i);
}

int mrc_lru_add(struct mrc_lru *lru, struct mrcache_region *r)
{
	struct mrc_lru_entry e = { __atomic_load_n(&r->last_use, __ATOMIC_RELAXED),
				   mrc_lru_id(lru, r) };

	/* Compacted here, not at removal: a reclaim that empties the heap
	 * removes each region at O(1), and the next add squeezes once. */
	if (lru->holes && (lru->count == lru->capacity ||
			   (lru->holes > 32 && lru->holes * 2 > lru->count)))
		compact(lru);
	if (lru->count == lru->capacity && grow(lru))
		return -ENOMEM;
	place(lru, lru->count++, e);
	sift_up(lru, lru->count - 1);
	return 0;
}

void mrc_lru_trim(struct mrc_lru *lru)
{
	while (lru->count && lru->heap[lru->count - 1].id == MRC_LRU_HOLE) {
		lru->count--;
		lru->holes--;
	}
}

struct mrcache_region *mrc_lru_pop(struct mrc_lru *lru,
				   int (*usable)(const struct mrcache_region *r, void *arg),
				   void *arg)
{
	struct mrcache_region *victim = NULL;
	uint32_t refused = 0;

	/* Refused regions are parked at the end of the array, beyond count,
	 * and put back afterwards. */
	while (lru->count > 0) {
		struct mrc_lru_entry e = lru->heap[0];
		struct mrcache_region *r = mrc_lru_region(lru, e.id);
		uint64_t used;

		if (!r) {
			lru->holes--;
			remove_root(lru);
			continue;
		}
		used = __atomic_load_n(&r->last_use, __ATOMIC_RELAXED);
		if (used != e.key) {
			lru->heap[0].key = used;
			sift_down(lru, 0);
			continue;
		}
		remove_root(lru);
		if (usable(r, arg)) {
			region_cold(r)->lru_pos = MRC_LRU_NOT_IN_HEAP;
			victim = r;
			break;
		}
		refused++;
		lru->heap[lru->capacity - refused] = e;
	}
	while (refused > 0) {
		place(lru, lru->count, lru->heap[lru->capacity - refused--]);
		sift_up(lru, lru->count++);
	}
	return victim;
}
