/* SPDX-License-Identifier: MIT */
/*
 * index.h - address -> region, a radix tree over 4 KiB page numbers.
 *
 * Shaped like a CPU page table: 4 levels of 512 slots cover 48-bit
 * addresses; a leaf slot holds the region that covers that page.  Regions in
 * the index never overlap, so a page has at most one.
 *
 * Concurrency: writers (set/clear) hold the cache lock; readers (lookup,
 * walk) hold nothing.  Slots are read with acquire and written with release
 * loads/stores; nodes are only freed by mrc_index_destroy(), so a reader
 * never touches freed memory.  What a reader finds may be stale: callers
 * validate the region they get (see cache_hit in cache.c).
 */
#ifndef MRC_INDEX_H
#define MRC_INDEX_H

#include <stdint.h>

#define MRC_INDEX_PAGE_SHIFT	12
#define MRC_INDEX_ADDR_BITS	48
#define MRC_INDEX_LIMIT		(1ull << MRC_INDEX_ADDR_BITS)

struct mrcache_region;
struct mrc_index;

int mrc_index_create(struct mrc_index **out);
void mrc_index_destroy(struct mrc_index *idx);
/* Bytes of node memory, for the stats and the memory benchmark. */
uint64_t mrc_index_bytes(const struct mrc_index *idx);

/* Lock-free.  The region whose pages include addr, or NULL. */
struct mrcache_region *mrc_index_lookup(const struct mrc_index *idx,
					uintptr_t addr);

/* Under the cache lock.  [start, end) is 4 KiB aligned and below
 * MRC_INDEX_LIMIT.  set either fills every page or changes nothing
 * (-ENOMEM). */
int mrc_index_set(struct mrc_index *idx, uintptr_t start, uintptr_t end,
		  struct mrcache_region *r);
/* Empties the pages of [start, end) that hold r. */
void mrc_index_clear(struct mrc_index *idx, uintptr_t start, uintptr_t end,
		     const struct mrcache_region *r);

/* Lock-free.  Calls fn once per run of pages holding the same region, in
 * address order, for every page of [start, end) that holds one; stops
 * early and returns fn's value when it is nonzero. */
typedef int (*mrc_index_fn)(struct mrcache_region *r, void *arg);
int mrc_index_walk(const struct mrc_index *idx, uintptr_t start, uintptr_t end,
		   mrc_index_fn fn, void *arg);

#endif
