/* SPDX-License-Identifier: MIT */
/*
 * region.h - a cached registration and its reference/state word.
 *
 * refstate packs a reference count (low 32 bits) with three flags:
 *   PENDING    being registered; not yet handed out
 *   DEAD       out of the index; never handed out again
 *   RECLAIMED  deregistered; the struct is free (or about to be reused)
 * Every change is an atomic read-modify-write, so the speculative +1 of a
 * lock-free reader holding a stale pointer and its -1 always cancel, even
 * if the region was reused in between.  Most hits take no reference: they
 * hold the region in a hazard slot of their thread (threads.h), which
 * reclaim respects as it respects the count (docs/architecture.md, "The
 * region-recycling argument").  Region structs are type-stable:
 * they come from slabs freed only by mrcache_destroy(), so such a reader
 * never touches freed memory.
 */
#ifndef MRC_REGION_H
#define MRC_REGION_H

#include <stdint.h>
#include "backend/backend.h"
#include "monitor/monitor.h"

#define REF_PENDING	(1ull << 62)
#define REF_DEAD	(1ull << 61)
#define REF_RECLAIMED	(1ull << 60)
#define REF_COUNT_MASK	0xffffffffull
#define REF_FLAGS	(REF_PENDING | REF_DEAD | REF_RECLAIMED)

/* region_cold()->flags, under the cache lock */
#define REGION_INDEXED	(1u << 0)	/* in the index and the LRU */
#define REGION_UNCACHED	(1u << 1)	/* handed out once, dereg at put */
#define REGION_DEAD_HELD (1u << 2)	/* killed while held: dereg at last put */

#define REGION_ACCESS_BITS	0xfu	/* MRCACHE_ACCESS_ALL, kept in end's low bits */
/* The backend flags' class (cache.h), also in end's low bits: a hit needs
 * the same class, as it needs the access bits. */
#define REGION_CLASS_SHIFT	4
#define REGION_CLASS_BITS	0xff0u
#define REGION_END_MASK		(~(uintptr_t)0xfff)	/* end, of end_access */
#define REGION_SLAB_BYTES	32768u	/* slabs are aligned to their size */

/*
 * The hot part: everything a hit and a put touch, in one cache line.
 * The rest lives in a parallel array of the same slab (region_cold()), so
 * a cached region costs 96 bytes and a hit one line of it (plus the cold
 * line when the caller reads the key or handle).
 */
struct mrcache_region {
	uint64_t refstate;		/* atomic: the get's +1, the put's -1 */
	/* The hit's range check.  Written before the region is published,
	 * read after a reference is taken; relaxed atomics because
	 * mrc_cache_unmapped() reads them on regions it holds no reference
	 * on. */
	uintptr_t start;
	uintptr_t end_access;		/* end | access (end is page aligned) */
	/* The hit's intact check loads word and expected; for user-side
	 * monitors word points at watch.local, in this same line.  token is
	 * the one field here no hit reads: it stays with the rest of the
	 * monitor's struct. */
	struct mrc_watch watch;
	uint64_t last_use;		/* relaxed; the LRU epoch of the last put,
					 * stored only when it changes */
} __attribute__((aligned(64)));

struct region_cold {
	struct mrc_reg reg;
	uint32_t lru_pos;		/* heap index, under the cache lock */
	uint16_t flags;
	uint16_t cause;			/* why it died */
};

#define REGION_SLAB_REGIONS (REGION_SLAB_BYTES / \
			     (sizeof(struct mrcache_region) + sizeof(struct region_cold)))

/* No header: the cache's slabset (slabset.h) knows its slabs.  user is
 * the regions' user pointers (mrcache_region_user()), allocated the first
 * time one of them gets one, so a cache that never sets any pays nothing
 * per region: it lives in the slab's spare tail. */
struct mrc_slab {
	struct mrcache_region hot[REGION_SLAB_REGIONS];
	struct region_cold cold[REGION_SLAB_REGIONS];
	void **user;			/* NULL, or REGION_SLAB_REGIONS of them */
};
_Static_assert(sizeof(struct mrc_slab) <= REGION_SLAB_BYTES, "a slab fits its alignment");

static inline struct mrc_slab *region_slab(const struct mrcache_region *r)
{
	return (struct mrc_slab *)((uintptr_t)r & ~(uintptr_t)(REGION_SLAB_BYTES - 1));
}

static inline struct region_cold *region_cold(const struct mrcache_region *r)
{
	struct mrc_slab *slab = region_slab(r);

	return &slab->cold[r - slab->hot];
}

static inline uintptr_t region_start(const struct mrcache_region *r)
{
	return __atomic_load_n(&r->start, __ATOMIC_RELAXED);
}

static inline uintptr_t region_end(const struct mrcache_region *r)
{
	return __atomic_load_n(&r->end_access, __ATOMIC_RELAXED) & REGION_END_MASK;
}

static inline unsigned region_access(const struct mrcache_region *r)
{
	return (unsigned)(__atomic_load_n(&r->end_access, __ATOMIC_RELAXED) & REGION_ACCESS_BITS);
}

static inline unsigned region_class(const struct mrcache_region *r)
{
	return (unsigned)(__atomic_load_n(&r->end_access, __ATOMIC_RELAXED) & REGION_CLASS_BITS);
}

/* The hit-path check: one acquire load.  expected is set when the region
 * is watched, before it is published, and never changes after. */
static inline int region_intact(const struct mrcache_region *r)
{
	return __atomic_load_n(r->watch.word, __ATOMIC_ACQUIRE) ==
	       __atomic_load_n(&r->watch.expected, __ATOMIC_RELAXED);
}

#endif
