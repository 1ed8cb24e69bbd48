/* SPDX-License-Identifier: MIT */
/* lru.c - the min-heap behind mrc_lru_* (see lru.h). */
#include <errno.h>
#include <stdlib.h>
#include "lru.h"
#include "region.h"

#define NOT_IN_HEAP UINT32_MAX

void mrc_lru_init(struct mrc_lru *lru)
{
	lru->heap = NULL;
	lru->count = lru->capacity = 0;
}

void mrc_lru_fini(struct mrc_lru *lru)
{
	free(lru->heap);
	mrc_lru_init(lru);
}

static void place(struct mrc_lru *lru, uint32_t pos, struct mrcache_region *r)
{
	lru->heap[pos] = r;
	region_cold(r)->lru_pos = pos;
}

static void sift_up(struct mrc_lru *lru, uint32_t pos)
{
	struct mrcache_region *r = lru->heap[pos];

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (region_cold(lru->heap[parent])->lru_key <= region_cold(r)->lru_key)
			break;
		place(lru, pos, lru->heap[parent]);
		pos = parent;
	}
	place(lru, pos, r);
}

static void sift_down(struct mrc_lru *lru, uint32_t pos)
{
	struct mrcache_region *r = lru->heap[pos];

	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= lru->count)
			break;
		if (child + 1 < lru->count &&
		    region_cold(lru->heap[child + 1])->lru_key < region_cold(lru->heap[child])->lru_key)
			child++;
		if (region_cold(r)->lru_key <= region_cold(lru->heap[child])->lru_key)
			break;
		place(lru, pos, lru->heap[child]);
		pos = child;
	}
	place(lru, pos, r);
}

int mrc_lru_add(struct mrc_lru *lru, struct mrcache_region *r)
{
	if (lru->count == lru->capacity) {
		uint32_t cap = lru->capacity ? lru->capacity * 2 : 64;
		struct mrcache_region **heap = realloc(lru->heap, cap * sizeof(*heap));

		if (!heap)
			return -ENOMEM;
		lru->heap = heap;
		lru->capacity = cap;
	}
	region_cold(r)->lru_key = __atomic_load_n(&r->last_use, __ATOMIC_RELAXED);
	place(lru, lru->count++, r);
	sift_up(lru, region_cold(r)->lru_pos);
	return 0;
}

void mrc_lru_remove(struct mrc_lru *lru, struct mrcache_region *r)
{
	uint32_t pos = region_cold(r)->lru_pos;

	if (pos == NOT_IN_HEAP || pos >= lru->count || lru->heap[pos] != r)
		return;
	region_cold(r)->lru_pos = NOT_IN_HEAP;
	if (pos == --lru->count)
		return;
	place(lru, pos, lru->heap[lru->count]);
	sift_down(lru, pos);
	sift_up(lru, region_cold(lru->heap[pos])->lru_pos);
}

struct mrcache_region *mrc_lru_pop(struct mrc_lru *lru,
				   int (*usable)(const struct mrcache_region *r))
{
	struct mrcache_region *victim = NULL;
	uint32_t refused = 0;

	/* Refused regions are parked at the end of the array, beyond count,
	 * and put back afterwards. */
	while (lru->count > 0) {
		struct mrcache_region *r = lru->heap[0];
		uint64_t used = __atomic_load_n(&r->last_use, __ATOMIC_RELAXED);

		if (used != region_cold(r)->lru_key) {
			region_cold(r)->lru_key = used;
			sift_down(lru, 0);
			continue;
		}
		lru->count--;
		if (lru->count > 0) {
			place(lru, 0, lru->heap[lru->count]);
			sift_down(lru, 0);
		}
		if (usable(r)) {
			region_cold(r)->lru_pos = NOT_IN_HEAP;
			victim = r;
			break;
		}
		refused++;
		lru->heap[lru->capacity - refused] = r;
	}
	while (refused > 0) {
		struct mrcache_region *r = lru->heap[lru->capacity - refused--];

		place(lru, lru->count++, r);
		sift_up(lru, region_cold(r)->lru_pos);
	}
	return victim;
}
