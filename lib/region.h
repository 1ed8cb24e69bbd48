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
 * if the region was reused in between.  Region structs are type-stable:
 * they come from slabs freed only by mrcache_destroy(), so such a reader
 * never touches freed memory.
 */
#ifndef MRC_REGION_H
#define MRC_REGION_H

#include <stdint.h>
#include "backend.h"
#include "monitor.h"

#define REF_PENDING	(1ull << 62)
#define REF_DEAD	(1ull << 61)
#define REF_RECLAIMED	(1ull << 60)
#define REF_COUNT_MASK	0xffffffffull
#define REF_FLAGS	(REF_PENDING | REF_DEAD | REF_RECLAIMED)

/* region->flags, under the cache lock */
#define REGION_INDEXED	(1u << 0)	/* in the index and the LRU */
#define REGION_UNCACHED	(1u << 1)	/* handed out once, dereg at put */

struct mrcache_region {
	uint64_t refstate;		/* atomic, see above */
	/* Written before the region is published, read after a reference
	 * is taken; relaxed atomics because mrc_cache_unmapped() reads
	 * start/end of regions it holds no reference on. */
	uintptr_t start, end;
	uint32_t access;
	uint32_t flags;
	struct mrc_watch watch;
	struct mrc_reg reg;
	uint64_t last_use;		/* relaxed; stamped at put */
	uint64_t lru_key;		/* heap key, under the cache lock */
	uint32_t lru_pos;		/* heap index, under the cache lock */
	uint32_t cause;			/* why it died */
};

static inline uintptr_t region_start(const struct mrcache_region *r)
{
	return __atomic_load_n(&r->start, __ATOMIC_RELAXED);
}

static inline uintptr_t region_end(const struct mrcache_region *r)
{
	return __atomic_load_n(&r->end, __ATOMIC_RELAXED);
}

/* The hit-path check: one acquire load. */
static inline int region_intact(const struct mrcache_region *r)
{
	return __atomic_load_n(r->watch.word, __ATOMIC_ACQUIRE) == r->watch.expected;
}

/* A monotonic stamp cheap enough for every put. */
static inline uint64_t region_stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

#endif
