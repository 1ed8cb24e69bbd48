/* SPDX-License-Identifier: MIT */
/*
 * lib/cache/invalidate.c - how monitor reports become reclaimed regions.
 *
 * Two halves.  The first runs wherever the monitor learns of VM activity,
 * possibly inside munmap() hooks, free(), or the cache's own calls: it only
 * clears words and queues ranges (mrc_cache_unmapped).  The second runs in
 * a later cache call under cache->lock (mrc_cache_drain_locked): it removes
 * every region whose word changed and deregisters those nobody holds.
 */
#include "cache/cache.h"
#include "common/prof.h"

struct unmapped_range {
	uintptr_t start, end;
};

static int clear_word(struct mrcache_region *r, void *arg)
{
	const struct unmapped_range *u = arg;

	/* r may be a stale pointer to a reused region: check the range it
	 * has now.  Clearing a reused region's word by mistake only costs a
	 * re-registration; the next cache call kills it (cache_get_slow). */
	if (region_start(r) < u->end && region_end(r) > u->start)
		__atomic_fetch_and(&r->watch.local, ~MRC_WORD_VALID, __ATOMIC_SEQ_CST);
	return 0;
}

void mrc_cache_unmapped(struct mrcache *c, uintptr_t start, uintptr_t end,
			enum mrcache_cause cause)
{
	struct unmapped_range u = { start, end };

	if (start >= end)
		return;
	/* A full barrier (and the signal for uncached re-checks) before the
	 * walk reads the index. */
	__atomic_fetch_add(&c->unmap_seq, 1, __ATOMIC_SEQ_CST);
	mrc_index_walk(c->index, start, end, clear_word, &u);

	/* Lock-free: a signal handler that unmaps may have interrupted this
	 * very function, or a drain, on its own thread (lib/cache/event_ring.h). */
	mrc_event_ring_push(&c->events, &(struct mrc_unmapped){ start, end, cause });
	__atomic_store_n(&c->events_waiting, 1, __ATOMIC_SEQ_CST);
}

struct kill_arg {
	struct mrcache *cache;
	enum mrcache_cause cause;
	int killed;
};

static int kill_if_changed(struct mrcache_region *r, void *arg)
{
	struct kill_arg *k = arg;

	if ((region_cold(r)->flags & REGION_INDEXED) && !region_intact(r)) {
		mrc_region_invalidate(k->cache, r, k->cause);
		k->killed++;
	}
	return 0;
}

void mrc_cache_event(struct mrcache *c, uint64_t cookie, uintptr_t start,
		     uintptr_t end, enum mrcache_cause cause)
{
	struct kill_arg k = { c, cause, 0 };

	if ((unsigned)cause >= MRCACHE_CAUSE_COUNT_)
		cause = k.cause = MRCACHE_CAUSE_OTHER;
	/* The cookie names the region, unless it was reused since: then
	 * its word is intact and nothing happens.  Fall back to the range
	 * when the cookie is not one of ours. */
	if (mrc_region_is_ours(c, (struct mrcache_region *)(uintptr_t)cookie))
		kill_if_changed((struct mrcache_region *)(uintptr_t)cookie, &k);
	else
		mrc_index_walk(c->index, start, end, kill_if_changed, &k);
}

void mrc_cache_rescan(struct mrcache *c)
{
	struct kill_arg k = { c, MRCACHE_CAUSE_OVERFLOW, 0 };

	/* A kill leaves a hole in the heap and moves no entry, and dropping
	 * trailing holes only lowers count: a walk by position sees every
	 * region once. */
	for (uint32_t i = 0; i < c->lru.count; i++) {
		struct mrcache_region *r = mrc_lru_at(&c->lru, i);

		if (r)
			kill_if_changed(r, &k);
	}
}

int mrc_cache_drain_locked(struct mrcache *c)
{
	struct mrc_unmapped batch[MRC_EVENT_RING];
	uint32_t n = 0;
	int overflow, reported = 0;
	uint64_t t0 = mrc_prof_on ? mrc_now_ns() : 0;

	if (c->monitor->ops->drain)
		reported = c->monitor->ops->drain(c->monitor);
	if (__atomic_load_n(&c->events_waiting, __ATOMIC_ACQUIRE)) {
		/* Cleared first: a push the drain misses raises it again. */
		__atomic_store_n(&c->events_waiting, 0, __ATOMIC_SEQ_CST);
		n = mrc_event_ring_drain(&c->events, batch, &overflow);

		for (uint32_t i = 0; i < n; i++) {
			struct kill_arg k = { c, batch[i].cause, 0 };

			mrc_index_walk(c->index, batch[i].start, batch[i].end, kill_if_changed, &k);
		}
		if (overflow)
			mrc_cache_rescan(c);
		reported += (int)n;
	}
	if (mrc_prof_on && reported)
		mrc_prof_add_span(MRC_PROF_INVALIDATE, t0);
	return reported < 0 ? 0 : reported;
}
