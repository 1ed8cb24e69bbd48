/* SPDX-License-Identifier: MIT */
/*
 * threads.h - what one thread writes on a hit, in a block of its own.
 *
 * Every cache has MRC_THREADS blocks, one cache line each.  A thread
 * claims a free block of a cache at its first hit or put there and
 * releases it when it exits (a pthread key's destructor), so the next
 * thread reuses it; counters stay in the block and add up across its
 * owners.  Only the owner writes a block's counters.  A thread that finds
 * every block claimed (more than MRC_THREADS live threads on one cache)
 * counts in the shared block with atomic adds instead: counts are exact
 * either way.
 *
 * A block also holds the thread's hazard slots (cache.c, "the hit
 * path"): a hit publishes its region in a free slot instead of raising the
 * region's reference count, and reclaim leaves alone every region some
 * slot holds.  Slots are written by their owner (publish, clear), by
 * mrcache_put() of a region another thread got (clear) and by the owner's
 * exit (clear), always by compare-and-swap; reclaim reads them.  The
 * shared block's slots are never used: a thread without a block of its own
 * takes references.
 *
 * The blocks outlive the cache while a thread still names them: struct
 * mrc_threads is reference counted (the cache, and every thread that
 * looked it up), so an exiting thread never touches freed memory and a
 * block's address names one cache for as long as anyone holds it.
 */
#ifndef MRC_THREADS_H
#define MRC_THREADS_H

#include <stdint.h>

#define MRC_THREADS		64
#define MRC_THREAD_CACHES	8	/* caches one thread has blocks of at once */
#define MRC_THREAD_SLOTS	6	/* regions one thread holds without a reference */

struct mrcache_region;

struct mrc_thread {
	struct mrcache_region *slot[MRC_THREAD_SLOTS];	/* atomic, seq_cst */
	uint64_t hits;
	uint64_t subrange_hits;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct mrc_thread) == 64, "a block is one line");

struct mrc_threads {
	struct mrc_thread block[MRC_THREADS];
	struct mrc_thread shared;	/* atomic adds: threads without a block */
	struct mrcache *cache;
	uint32_t refs;			/* atomic: the cache's and one per thread */
	uint32_t claimed_max;		/* atomic: blocks [0, claimed_max) were ever claimed */
	uint8_t dead;			/* atomic: the cache is being destroyed */
	uint8_t claimed[MRC_THREADS];	/* atomic: free, owned, or orphaned by an
					   exited thread whose slots still hold
					   regions (threads.c) */
};

/* This thread's blocks: of which cache's blocks, and which one (the shared
 * block when none was free). */
struct mrc_thread_ref {
	struct mrc_threads *threads;
	struct mrc_thread *t;
};
extern __thread struct mrc_thread_ref mrc_thread_refs[MRC_THREAD_CACHES];

struct mrcache;

/* threads.c */
int mrc_threads_create(struct mrcache *c, struct mrc_threads **out);
/* The cache is going: threads that exit later leave its regions alone. */
void mrc_threads_destroy(struct mrc_threads *th);
/* Does a slot of any thread hold r?  Reclaim asks after r is DEAD; a get
 * that publishes r later sees DEAD (both sides seq_cst). */
int mrc_threads_held(struct mrc_threads *th, const struct mrcache_region *r);
/* Does any slot hold anything (mrcache_destroy)? */
int mrc_threads_any_held(struct mrc_threads *th);
/* Clear a slot of any thread that holds r: the put of a region another
 * thread got.  1 if one did, then the caller checks r as after its own. */
int mrc_threads_clear_any(struct mrc_threads *th, struct mrcache_region *r);
/* Add up the hit counts of every block. */
void mrc_threads_sum(struct mrc_threads *th, uint64_t *hits, uint64_t *subrange_hits);
/* This thread's block of th, claimed at the first call; the shared block
 * when none is free. */
struct mrc_thread *mrc_thread_get_slow(struct mrc_threads *th);

/* This thread's block: a walk of its few refs, the first usually right. */
static inline struct mrc_thread *mrc_thread_get(struct mrc_threads *th)
{
	for (int i = 0; i < MRC_THREAD_CACHES; i++)
		if (mrc_thread_refs[i].threads == th)
			return mrc_thread_refs[i].t;
	return mrc_thread_get_slow(th);
}

/* One more of this thread's hits.  Only the owner writes its block. */
static inline void mrc_thread_count(struct mrc_threads *th, struct mrc_thread *t,
				    uint64_t *counter)
{
	if (__builtin_expect(t == &th->shared, 0))
		__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
	else
		__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELAXED);
}

#endif
