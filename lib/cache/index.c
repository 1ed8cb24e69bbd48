/* SPDX-License-Identifier: MIT */
/* index.c - the radix tree behind mrc_index_* (see index.h). */
#include <errno.h>
#include <stdlib.h>
#include "cache/index.h"

#define LEVEL_BITS	9
#define FANOUT		(1u << LEVEL_BITS)
#define LEVELS		4

struct idx_node {
	void *slot[FANOUT];
};

struct mrc_index {
	struct idx_node *root;
	uint64_t nodes;		/* under the cache lock */
};

static unsigned slot_of(uint64_t page, int level)
{
	return (unsigned)(page >> (LEVEL_BITS * (LEVELS - 1 - level))) & (FANOUT - 1);
}

static void *load_slot(void *const *slot)
{
	return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

static void store_slot(void **slot, void *value)
{
	__atomic_store_n(slot, value, __ATOMIC_RELEASE);
}

int mrc_index_create(struct mrc_index **out)
{
	struct mrc_index *idx = calloc(1, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	idx->root = calloc(1, sizeof(*idx->root));
	if (!idx->root) {
		free(idx);
		return -ENOMEM;
	}
	idx->nodes = 1;
	*out = idx;
	return 0;
}

static void free_node(struct idx_node *node, int level)
{
	if (level < LEVELS - 1)
		for (unsigned i = 0; i < FANOUT; i++)
			if (node->slot[i])
				free_node(node->slot[i], level + 1);
	free(node);
}

void mrc_index_destroy(struct mrc_index *idx)
{
	if (!idx)
		return;
	free_node(idx->root, 0);
	free(idx);
}

uint64_t mrc_index_bytes(const struct mrc_index *idx)
{
	return idx->nodes * sizeof(struct idx_node) + sizeof(*idx);
}

/* The leaf holding page, if there is one.  Every hit walks this
 * (mrc_index_lookup): unrolled, each level is a shift, a mask and a load. */
static struct idx_node *leaf_find(const struct mrc_index *idx, uint64_t page)
{
	struct idx_node *node = idx->root;

#pragma GCC unroll 4
	for (int level = 0; level < LEVELS - 1; level++) {
		node = load_slot((void *const *)&node->slot[slot_of(page, level)]);
		if (!node)
			return NULL;
	}
	return node;
}

struct mrcache_region *mrc_index_lookup(const struct mrc_index *idx, uintptr_t addr)
{
	uint64_t page = (uint64_t)addr >> MRC_INDEX_PAGE_SHIFT;
	const struct idx_node *leaf;

	if ((uint64_t)addr >= MRC_INDEX_LIMIT)
		return NULL;
	leaf = leaf_find(idx, page);
	return leaf ? load_slot(&leaf->slot[slot_of(page, LEVELS - 1)]) : NULL;
}

/* The leaf holding page, allocating the path when `create`. */
static struct idx_node *leaf_of(struct mrc_index *idx, uint64_t page, int create)
{
	struct idx_node *node = idx->root, *child;

	for (int level = 0; level < LEVELS - 1; level++) {
		void **slot = &node->slot[slot_of(page, level)];

		child = load_slot(slot);
		if (!child) {
			if (!create)
				return NULL;
			child = calloc(1, sizeof(*child));
			if (!child)
				return NULL;
			idx->nodes++;
			store_slot(slot, child);
		}
		node = child;
	}
	return node;
}

int mrc_index_set(struct mrc_index *idx, uintptr_t start, uintptr_t end,
		  struct mrcache_region *r)
{
	uint64_t first = start >> MRC_INDEX_PAGE_SHIFT, last = end >> MRC_INDEX_PAGE_SHIFT;
	uint64_t page;

	if (start >= end || (uint64_t)end > MRC_INDEX_LIMIT)
		return -EINVAL;
	/* Build every node first so a failed allocation changes no slot. */
	for (page = first; page < last; page = (page | (FANOUT - 1)) + 1)
		if (!leaf_of(idx, page, 1))
			return -ENOMEM;
	for (page = first; page < last; page++)
		store_slot(&leaf_of(idx, page, 0)->slot[slot_of(page, LEVELS - 1)], r);
	return 0;
}

/* One walk down per leaf, not per page. */
void mrc_index_clear(struct mrc_index *idx, uintptr_t start, uintptr_t end,
		     const struct mrcache_region *r)
{
	uint64_t last = end >> MRC_INDEX_PAGE_SHIFT;

	for (uint64_t page = start >> MRC_INDEX_PAGE_SHIFT; page < last;) {
		uint64_t stop = (page | (FANOUT - 1)) + 1;
		struct idx_node *leaf = leaf_find(idx, page);

		if (stop > last)
			stop = last;
		if (!leaf) {
			page = stop;
			continue;
		}
		for (; page < stop; page++) {
			void **slot = &leaf->slot[page & (FANOUT - 1)];

			if (load_slot(slot) == r)
				store_slot(slot, NULL);
		}
	}
}

/* Walk state: the last region reported, so a run of pages reports once. */
struct walk {
	mrc_index_fn fn;
	void *arg;
	struct mrcache_region *last;
	uint64_t end_page;
};

/* Slots [from, to) of a leaf: a walk spends most of its time here (an
 * invalidation of many small regions visits each of their pages), so one
 * load and one compare per slot; NULL != last resets the run. */
static int walk_leaf(const struct idx_node *leaf, unsigned from, unsigned to,
		     struct walk *w)
{
	for (unsigned i = from; i < to; i++) {
		struct mrcache_region *r = load_slot(&leaf->slot[i]);
		int rc;

		if (r == w->last)
			continue;
		w->last = r;
		if (r && (rc = w->fn(r, w->arg)) != 0)
			return rc;
	}
	return 0;
}

/* base: the first page node covers; page: where the walk starts in it
 * (base <= page < w->end_page). */
static int walk_node(const struct idx_node *node, int level, uint64_t base,
		     uint64_t page, struct walk *w)
{
	unsigned shift = LEVEL_BITS * (LEVELS - 1 - level);
	int rc;

	if (level == LEVELS - 1) {
		uint64_t left = w->end_page - base;
		unsigned to = left < FANOUT ? (unsigned)left : FANOUT;

		return walk_leaf(node, slot_of(page, level), to, w);
	}
	for (unsigned i = slot_of(page, level); i < FANOUT; i++) {
		uint64_t slot_base = base | ((uint64_t)i << shift);
		void *child;

		if (slot_base >= w->end_page)
			return 0;
		child = load_slot(&node->slot[i]);
		if (!child) {
			w->last = NULL;
		} else {
			rc = walk_node(child, level + 1, slot_base,
				       slot_base > page ? slot_base : page, w);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int mrc_index_walk(const struct mrc_index *idx, uintptr_t start, uintptr_t end,
		   mrc_index_fn fn, void *arg)
{
	struct walk w = { .fn = fn, .arg = arg };

	if ((uint64_t)start >= MRC_INDEX_LIMIT || start >= end)
		return 0;
	if ((uint64_t)end > MRC_INDEX_LIMIT)
		end = (uintptr_t)MRC_INDEX_LIMIT;
	w.end_page = ((uint64_t)end + (1u << MRC_INDEX_PAGE_SHIFT) - 1) >> MRC_INDEX_PAGE_SHIFT;
	return walk_node(idx->root, 0, 0, (uint64_t)start >> MRC_INDEX_PAGE_SHIFT, &w);
}
