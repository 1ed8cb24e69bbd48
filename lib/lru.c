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
	lru->count = lru->capacity = lru->holes = 0;
}

void mrc_lru_fini(struct mrc_lru *lru)
{
	free(lru->heap);
	mrc_lru_init(lru);
}

static void place(struct mrc_lru *lru, uint32_t pos, struct mrc_lru_entry e)
{
	lru->heap[pos] = e;
	if (e.r)
		region_cold(e.r)->lru_pos = pos;
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
		if (lru->heap[i].r)
			lru->heap[n++] = lru->heap[i];
	lru->count = n;
	lru->holes = 0;
	for (uint32_t i = 0; i < n; i++)
		region_cold(lru->heap[i].r)->lru_pos = i;
	for (uint32_t i = n / 2; i-- > 0;)
		sift_down(lru, i);
}

int mrc_lru_add(struct mrc_lru *lru, struct mrcache_region *r)
{
	struct mrc_lru_entry e = { __atomic_load_n(&r->last_use, __ATOMIC_RELAXED), r };

	if (lru->count == lru->capacity && lru->holes)
		compact(lru);
	if (lru->count == lru->capacity) {
		uint32_t cap = lru->capacity ? lru->capacity * 2 : 64;
		struct mrc_lru_entry *heap = realloc(lru->heap, cap * sizeof(*heap));

		if (!heap)
			return -ENOMEM;
		lru->heap = heap;
		lru->capacity = cap;
	}
	place(lru, lru->count++, e);
	sift_up(lru, lru->count - 1);
	return 0;
}

void mrc_lru_remove(struct mrc_lru *lru, struct mrcache_region *r)
{
	uint32_t pos = region_cold(r)->lru_pos;

	if (pos == NOT_IN_HEAP || pos >= lru->count || lru->heap[pos].r != r)
		return;
	region_cold(r)->lru_pos = NOT_IN_HEAP;
	lru->heap[pos].r = NULL;
	lru->holes++;
	while (lru->count && !lru->heap[lru->count - 1].r) {
		lru->count--;
		lru->holes--;
	}
	if (lru->holes > 32 && lru->holes * 2 > lru->count)
		compact(lru);
}

struct mrcache_region *mrc_lru_pop(struct mrc_lru *lru,
				   int (*usable)(const struct mrcache_region *r))
{
	struct mrcache_region *victim = NULL;
	uint32_t refused = 0;

	/* Refused regions are parked at the end of the array, beyond count,
	 * and put back afterwards. */
	while (lru->count > 0) {
		struct mrc_lru_entry e = lru->heap[0];
		uint64_t used;

		if (!e.r) {
			lru->holes--;
			remove_root(lru);
			continue;
		}
		used = __atomic_load_n(&e.r->last_use, __ATOMIC_RELAXED);
		if (used != e.key) {
			lru->heap[0].key = used;
			sift_down(lru, 0);
			continue;
		}
		remove_root(lru);
		if (usable(e.r)) {
			region_cold(e.r)->lru_pos = NOT_IN_HEAP;
			victim = e.r;
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
