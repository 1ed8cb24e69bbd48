/* SPDX-License-Identifier: MIT */
/*
 * cache.c - get/put and the life of a region.
 *
 * The hit path takes no lock and writes only its thread's block (see
 * docs/architecture.md): it finds a region in the lock-free index,
 * publishes it in one of the thread's hazard slots (or, with none free,
 * takes a speculative reference), then validates the region: live,
 * covering the request, enough access, and its watch word intact.
 * Everything else runs under cache->lock.  Reclaim and the slots:
 *
 *   hit (any thread)                     reclaim (cache->lock held)
 *   ----------------                     --------------------------
 *   r = index_lookup()                   region_kill: index_clear(r)
 *   CAS(slot, NULL, r)      seq_cst      fetch_or(r->refstate, DEAD) seq_cst
 *   load(r->refstate)       seq_cst      reclaim_flush: load every slot seq_cst
 *     DEAD: clear slot, miss               one holds r: leave r to its holder
 *     live: check range, word: hit         none: CAS DEAD -> RECLAIMED, dereg
 *   put: CAS(slot, r, NULL) seq_cst
 *        load(r->refstate)  seq_cst
 *          DEAD, no reference: queue r for reclaim
 *
 * Whichever of the publish and the slot's load comes first in the seq_cst
 * order, one side sees the other: the reclaim sees the slot, or the hit
 * sees DEAD.  Likewise for the clear: the reclaim sees it cleared, or the
 * clearer sees DEAD and queues r again.
 *
 * A miss follows watch, register, re-check (docs/protocol.md):
 *
 *   miss (cache->lock held)              unmapping thread
 *   -----------------------              ----------------
 *   monitor watch(range)
 *   index_set(range, r PENDING)          munmap(range)
 *   backend reg(range)  -- pins pages    monitor clears r's word
 *   region_intact(r)?   -- re-check
 *     no:  dereg, unwatch, retry
 *     yes: publish (PENDING -> live, 1 ref)
 *
 * An unmap before the watch is over before the pages are pinned; one after
 * the watch clears the word, and either the re-check or every later hit
 * sees it.  Deregistration happens in cache calls (a miss, put, progress,
 * invalidate, flush), never inside a monitor callback.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cache/cache.h"
#include "common/log.h"
#include "common/prof.h"

#define MAX_RACE_RETRIES 16

/* --- the lock --- */

/* Callbacks (backend reg and dereg, on_invalidate, on_evict) run under
 * cache->lock.  One that called back into the same cache on the same
 * thread would wait for itself forever: every entry point refuses with
 * -EDEADLK instead.  The holder leaves its thread's token in lock_owner;
 * only that thread ever stores its own token, so it reads it back exactly
 * while it holds the lock.  The check reads lock_owner first: while nobody
 * holds the lock (the usual case of a hit) it costs one load of the cache,
 * and the thread-local's address, a call of __tls_get_addr in the shared
 * library, is taken only when someone does. */
static __thread char thread_token;

/* Messages logged under the lock carry the cache's name. */
static void lock_taken(struct mrcache *c)
{
	__atomic_store_n(&c->lock_owner, &thread_token, __ATOMIC_RELAXED);
	if (c->name[0])
		c->log_name_saved = mrc_log_name(c->name);
}

void mrc_cache_lock(struct mrcache *c)
{
	pthread_mutex_lock(&c->lock);
	lock_taken(c);
}

static int cache_trylock(struct mrcache *c)
{
	if (pthread_mutex_trylock(&c->lock))
		return 0;
	lock_taken(c);
	return 1;
}

static void reclaim_flush(struct mrcache *c);

/* A message about c from outside its lock section, with its name. */
#define cache_log(c, level, ...) do {						\
	const char *saved_ = mrc_log_name((c)->name[0] ? (c)->name : NULL);	\
	mrc_log(level, __VA_ARGS__);						\
	mrc_log_name(saved_);							\
} while (0)

/* Regions reclaimed in this lock section are unwatched and freed here,
 * in one batch, before anyone else can take the lock. */
void mrc_cache_unlock(struct mrcache *c)
{
	if (c->reclaim_count)
		reclaim_flush(c);
	if (c->name[0])
		mrc_log_name(c->log_name_saved);
	__atomic_store_n(&c->lock_owner, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->lock);
}

/* Out of line, or the compiler takes the address on every call. */
static int __attribute__((noinline)) owned_here(const void *owner)
{
	return owner == &thread_token;
}

static int lock_held_here(const struct mrcache *c)
{
	const void *owner = __atomic_load_n(&c->lock_owner, __ATOMIC_RELAXED);

	return __builtin_expect(owner != NULL, 0) && owned_here(owner);
}

static int reentered(const struct mrcache *c, const char *fn)
{
	if (!lock_held_here(c))
		return 0;
	cache_log(c, 0, "%s called from a callback of the same cache", fn);
	return -EDEADLK;
}

int mrc_cache_reentered(const struct mrcache *c, const char *fn)
{
	return reentered(c, fn);
}

/* Regions live in slabs never freed before mrcache_destroy(), so a
 * lock-free reader's stale pointer always points at a region struct. */
static struct mrcache_region *region_alloc(struct mrcache *c)
{
	struct mrcache_region *r;
	uint64_t old, new;

	if (!c->free_regions) {
		struct mrc_slab *slab = mrc_slabset_add(&c->slabs);

		if (!slab)
			return NULL;
		for (int i = (int)REGION_SLAB_REGIONS - 1; i >= 0; i--) {
			r = &slab->hot[i];
			r->refstate = REF_DEAD | REF_RECLAIMED;
			slab->cold[i].lru_pos = MRC_LRU_NOT_IN_HEAP;
			slab->cold[i].reg.handle = c->free_regions;
			c->free_regions = r;
		}
	}
	r = c->free_regions;
	c->free_regions = region_cold(r)->reg.handle;
	/* Keep any speculative references a stale reader still holds. */
	old = __atomic_load_n(&r->refstate, __ATOMIC_RELAXED);
	do {
		new = (old & REF_COUNT_MASK) | REF_PENDING;
	} while (!__atomic_compare_exchange_n(&r->refstate, &old, new, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	memset(&region_cold(r)->reg, 0, sizeof(struct mrc_reg));
	if (region_slab(r)->user)
		region_slab(r)->user[r - region_slab(r)->hot] = NULL;
	region_cold(r)->flags = 0;
	region_cold(r)->cause = 0;
	return r;
}

static void region_free(struct mrcache *c, struct mrcache_region *r)
{
	region_cold(r)->reg.handle = c->free_regions;
	c->free_regions = r;
}

static void region_set_range(struct mrcache_region *r, uintptr_t start,
			     uintptr_t end, unsigned access)
{
	__atomic_store_n(&r->start, start, __ATOMIC_RELAXED);
	__atomic_store_n(&r->end_access, end | access, __ATOMIC_RELAXED);
}

static void dereg_failed(const struct mrcache_region *r, int rc)
{
	mrc_log(0, "deregistration of [%#lx, %#lx) failed: %s",
		(unsigned long)region_start(r), (unsigned long)region_end(r), strerror(-rc));
}

/* One deregistration, without the stats (the caller times it).  Inline:
 * reclaim_flush() runs it for every region of a batch. */
static inline void dereg_one(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t t0 = mrc_prof_on ? mrc_now_ns() : 0;
	int rc = c->backend->ops->dereg(c->backend, &region_cold(r)->reg);

	if (__builtin_expect(rc != 0, 0))
		dereg_failed(r, rc);
	if (mrc_prof_on)
		mrc_prof_add(MRC_PROF_DEREGISTER, mrc_now_ns() - t0);
}

static void backend_dereg(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t t0 = mrc_now_ns();

	dereg_one(c, r);
	c->st.deregistrations++;
	c->st.deregister_ns += mrc_now_ns() - t0;
}

static void monitor_unwatch(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t t0 = mrc_prof_on ? mrc_now_ns() : 0;	/* a read can be a system call */

	c->monitor->ops->unwatch(c->monitor, &r->watch);
	if (mrc_prof_on)
		mrc_prof_add(MRC_PROF_WATCH, mrc_now_ns() - t0);
}

/* Keep the queued regions that are still dead, unreferenced and in no
 * hazard slot, and mark them RECLAIMED; the rest wait for whoever holds
 * them (its slot clear or last put queues them again).  Each was DEAD
 * before this reads the slots, and a get that publishes one afterwards
 * reads its refstate afterwards too: it sees DEAD and lets go.  Returns
 * how many are kept. */
static uint32_t reclaim_claim(struct mrcache *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->reclaim_count; i++) {
		struct mrcache_region *r = c->reclaim[i];
		uint64_t expect = REF_DEAD;

		if (mrc_threads_held(c->threads, r) ||
		    !__atomic_compare_exchange_n(&r->refstate, &expect, REF_DEAD | REF_RECLAIMED,
						 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		if (region_cold(r)->flags & REGION_UNCACHED)
			c->outstanding_uncached--;
		if (region_cold(r)->flags & REGION_DEAD_HELD) {
			region_cold(r)->flags &= ~REGION_DEAD_HELD;
			c->outstanding_dead--;
		}
		c->reclaim[n++] = r;
	}
	c->reclaim_count = n;
	return n;
}

/* Deregister, unwatch and free the regions region_reclaim() queued: two
 * clock reads time the batch's deregistrations (deregister_ns is their
 * sum), one call of the monitor unwatches the lot (the kernel monitor's is
 * one UNWATCH ioctl), then each region goes back to the free list.  Under
 * the lock. */
static void reclaim_flush(struct mrcache *c)
{
	const struct mrc_monitor_ops *ops = c->monitor->ops;
	struct mrc_watch *w[MRC_RECLAIM_BATCH];
	uint32_t n = reclaim_claim(c);
	uint64_t t0 = mrc_now_ns();

	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++)
		dereg_one(c, c->reclaim[i]);
	c->st.deregistrations += n;
	c->st.deregister_ns += mrc_now_ns() - t0;
	t0 = mrc_prof_on ? mrc_now_ns() : 0;
	if (ops->unwatch_many) {
		for (uint32_t i = 0; i < n; i++)
			w[i] = &c->reclaim[i]->watch;
		ops->unwatch_many(c->monitor, w, n);
	} else {
		for (uint32_t i = 0; i < n; i++)
			ops->unwatch(c->monitor, &c->reclaim[i]->watch);
	}
	if (mrc_prof_on)
		mrc_prof_add(MRC_PROF_WATCH, (mrc_now_ns() - t0) / n);
	for (uint32_t i = 0; i < n; i++)
		region_free(c, c->reclaim[i]);
	c->reclaim_count = 0;
}

/* A dead region nobody references may be reclaimed: queue it.  Whether a
 * hazard slot still holds it is decided at the flush (reclaim_claim), for
 * the whole batch; its deregistration, unwatch and free wait in c->reclaim
 * for the end of the lock section (or a full batch, or an eviction that
 * needs the room), so a drain that reclaims many regions handles them at
 * once.  A region queued twice is claimed once.  Under the lock. */
static inline void region_reclaim(struct mrcache *c, struct mrcache_region *r)
{
	if (__atomic_load_n(&r->refstate, __ATOMIC_SEQ_CST) != REF_DEAD)
		return;
	c->reclaim[c->reclaim_count++] = r;
	if (c->reclaim_count == MRC_RECLAIM_BATCH)
		reclaim_flush(c);
}

/* The last hold of a dead region is gone (the lock's holder may be
 * reclaiming it already: region_reclaim() sorts that out). */
static void __attribute__((noinline)) region_release_dead(struct mrcache *c,
							  struct mrcache_region *r)
{
	mrc_cache_lock(c);
	region_reclaim(c, r);
	mrc_cache_unlock(c);
}

/* Let go of r's slot: the clear, then (both seq_cst) a look at r's word.
 * Reclaim sets DEAD before it reads the slots: either it saw this slot
 * clear, or this sees DEAD and queues r.  0 if the slot no longer held r
 * (another thread's put cleared it). */
static inline int slot_clear(struct mrcache *c, struct mrcache_region **slot,
			     struct mrcache_region *r)
{
	struct mrcache_region *want = r;

	if (!__atomic_compare_exchange_n(slot, &want, NULL, 0, __ATOMIC_SEQ_CST,
					 __ATOMIC_RELAXED))
		return 0;
	if (__builtin_expect(__atomic_load_n(&r->refstate, __ATOMIC_SEQ_CST) == REF_DEAD, 0))
		region_release_dead(c, r);
	return 1;
}

/* region_unref() of a region with no reference: the put of a region that
 * another thread's slot holds (it got r, this thread puts it), or of one
 * that is not held at all. */
static int __attribute__((noinline)) region_unref_slow(struct mrcache *c,
						       struct mrcache_region *r)
{
	if (mrc_threads_clear_any(c->threads, r)) {
		if (__atomic_load_n(&r->refstate, __ATOMIC_SEQ_CST) == REF_DEAD)
			region_release_dead(c, r);
		return 0;
	}
	cache_log(c, 0, "mrcache_put of a region that is not held");
	return -EINVAL;
}

/* Drop one reference.  Lock-free unless it was the last one of a dead
 * region, which is then reclaimed here.  A compare-and-swap, not a
 * subtraction: a count of 0 must not borrow from the flags, even for a
 * moment.  Inline, with the rare cases out of line. */
static inline int region_unref(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t old = __atomic_load_n(&r->refstate, __ATOMIC_RELAXED);

	do {
		if (__builtin_expect((old & REF_COUNT_MASK) == 0, 0))
			return region_unref_slow(c, r);
	} while (!__atomic_compare_exchange_n(&r->refstate, &old, old - 1, 0, __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	if (__builtin_expect(old - 1 == REF_DEAD, 0))
		region_release_dead(c, r);
	return 0;
}


enum kill_reason { KILL_INVALIDATED, KILL_EVICTED, KILL_MERGED, KILL_FLUSHED };

/* Inline everywhere: with `why` a constant the switch folds away, and the
 * one region_cold(r) serves the index, LRU and reclaim steps. */
static inline __attribute__((always_inline))
void region_kill(struct mrcache *c, struct mrcache_region *r,
		 enum mrcache_cause cause, enum kill_reason why)
{
	uintptr_t start = region_start(r), end = region_end(r);
	uint64_t old;

	mrc_index_clear(c->index, start, end, r);
	mrc_lru_remove(&c->lru, r);
	region_cold(r)->flags &= ~REGION_INDEXED;
	region_cold(r)->cause = (uint16_t)cause;
	c->nregions--;
	c->nbytes -= end - start;
	switch (why) {
	case KILL_INVALIDATED:
		c->st.invalidations[cause]++;
		if (c->cfg.on_invalidate)
			c->cfg.on_invalidate(c->cfg.cb_arg, start, end, cause);
		if (c->cfg.on_region_invalidate)
			c->cfg.on_region_invalidate(c->cfg.cb_arg, r, cause);
		break;
	case KILL_EVICTED:
		c->st.evictions++;
		if (c->cfg.on_evict)
			c->cfg.on_evict(c->cfg.cb_arg, start, end);
		if (c->cfg.on_region_evict)
			c->cfg.on_region_evict(c->cfg.cb_arg, r);
		break;
	case KILL_MERGED:
		c->st.merges++;
		break;
	case KILL_FLUSHED:
		break;
	}
	region_cold(r)->flags |= REGION_DEAD_HELD;
	c->outstanding_dead++;
	/* seq_cst: before the flush reads the hazard slots. */
	old = __atomic_fetch_or(&r->refstate, REF_DEAD, __ATOMIC_SEQ_CST);
	if ((old & REF_COUNT_MASK) == 0)
		region_reclaim(c, r);
}

void mrc_region_invalidate(struct mrcache *c, struct mrcache_region *r,
			   enum mrcache_cause cause)
{
	region_kill(c, r, cause, KILL_INVALIDATED);
}

/* Throw away a region that was never published (failure or race). */
static void region_discard(struct mrcache *c, struct mrcache_region *r,
			   int indexed, int watched, int registered)
{
	uint64_t old, new;

	if (indexed) {
		mrc_index_clear(c->index, region_start(r), region_end(r), r);
		mrc_lru_remove(&c->lru, r);
	}
	if (registered)
		backend_dereg(c, r);
	if (watched)
		monitor_unwatch(c, r);
	old = __atomic_load_n(&r->refstate, __ATOMIC_RELAXED);
	do {
		new = (old & REF_COUNT_MASK) | REF_DEAD | REF_RECLAIMED;
	} while (!__atomic_compare_exchange_n(&r->refstate, &old, new, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	region_free(c, r);
}

/* Neither referenced nor in a hazard slot, now.  A get may publish r
 * right after: it then holds a region that dies, and the flush leaves it
 * to that get's put, which reclaims it. */
static int region_evictable(const struct mrcache_region *r, void *arg)
{
	struct mrcache *c = arg;

	return (__atomic_load_n(&r->refstate, __ATOMIC_ACQUIRE) &
		(REF_COUNT_MASK | REF_FLAGS)) == 0 && !mrc_threads_held(c->threads, r);
}

static void lru_tick(struct mrcache *c);

static int evict_one(struct mrcache *c)
{
	struct mrcache_region *victim;

	/* Regions queued for reclaim keep their registration and watch until
	 * the flush: that may be the room asked for. */
	if (c->reclaim_count) {
		reclaim_flush(c);
		return 1;
	}
	lru_tick(c);
	victim = mrc_lru_pop(&c->lru, region_evictable, c);

	if (!victim)
		return 0;
	region_kill(c, victim, MRCACHE_CAUSE_MANUAL, KILL_EVICTED);
	/* An eviction makes room now: the registration and watch it frees
	 * may be what the next reg or WATCH needs (ENOSPC, EDQUOT), so it
	 * does not wait for the end of the lock section. */
	if (c->reclaim_count)
		reclaim_flush(c);
	return 1;
}

/* Evict until one more region of `size` bytes fits the limits. */
static int make_room(struct mrcache *c, uint64_t size)
{
	if (c->cfg.max_bytes && size > c->cfg.max_bytes)
		return 0;
	while ((c->cfg.max_regions && c->nregions + 1 > c->cfg.max_regions) ||
	       (c->cfg.max_bytes && c->nbytes + size > c->cfg.max_bytes))
		if (!evict_one(c))
			return 0;
	return 1;
}

/* --- fork --- */

/* A forked child inherits the cache's memory but not the right to use its
 * registrations (they pin the parent's pages, or live in the parent's
 * device context).  Every child bumps fork_generation; a cache created
 * under another generation refuses every call with -ECHILD. */
static unsigned fork_generation;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_child(void)
{
	__atomic_fetch_add(&fork_generation, 1, __ATOMIC_RELAXED);
}

static void fork_handler_install(void)
{
	pthread_atfork(NULL, NULL, fork_child);
}

static int forked(const struct mrcache *c)
{
	return __builtin_expect(c->fork_generation !=
				__atomic_load_n(&fork_generation, __ATOMIC_RELAXED), 0);
}

/* --- the hit path --- */

/* The LRU stamp: the epoch of r's last put, stored only when it moved
 * on.  The epoch advances at every miss and eviction (lru_tick, under the
 * lock), so a region put again and again between two of them is written
 * once, not at every put: regions put within one epoch are equally recent
 * to the LRU (lru.h). */
static inline void region_touch(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t now = __atomic_load_n(&c->lru_epoch, __ATOMIC_RELAXED);

	if (__atomic_load_n(&r->last_use, __ATOMIC_RELAXED) != now)
		__atomic_store_n(&r->last_use, now, __ATOMIC_RELAXED);
}

/* Under the lock: uses from now on are newer than every stamp so far. */
static void lru_tick(struct mrcache *c)
{
	__atomic_store_n(&c->lru_epoch, c->lru_epoch + 1, __ATOMIC_RELAXED);
}

/* A hit of the whole region (its first and last page asked for) or of a
 * sub-range.  [start, end) lies in the page-aligned [rstart, rend). */
static void count_hit(struct mrcache *c, struct mrc_thread *t, uintptr_t rstart,
		      uintptr_t rend, uintptr_t start, uintptr_t end)
{
	uintptr_t mask = c->page_size - 1;

	mrc_thread_count(c->threads, t, start - rstart <= mask && rend - end <= mask ?
			 &t->hits : &t->subrange_hits);
}

static int region_covers(const struct mrcache_region *r, uintptr_t start,
			 uintptr_t end, unsigned access)
{
	return region_start(r) <= start && end <= region_end(r) &&
	       (access & ~region_access(r) & REGION_ACCESS_BITS) == 0 &&
	       (access & REGION_CLASS_BITS) == region_class(r);
}

/* The checks of a hit on r, whose word (before the range) was old: live,
 * covering, enough access, watch intact.  The same as region_covers(), on
 * one load of each field. */
static inline int hit_valid(const struct mrcache_region *r, uint64_t old, uintptr_t start,
			    uintptr_t end, unsigned access, uintptr_t *rstart, uintptr_t *rend)
{
	uintptr_t end_access = __atomic_load_n(&r->end_access, __ATOMIC_RELAXED);

	*rstart = region_start(r);
	*rend = end_access & REGION_END_MASK;
	return !(old & REF_FLAGS) && *rstart <= start && end <= *rend &&
	       (access & ~end_access & REGION_ACCESS_BITS) == 0 &&
	       ((access ^ end_access) & REGION_CLASS_BITS) == 0 && region_intact(r);
}

/* The hit without a slot: a speculative reference, then the checks.  A
 * failed check drops the reference again.  For a thread whose slots are
 * all taken, or that has no block. */
static int __attribute__((noinline)) try_hit_ref(struct mrcache *c, struct mrc_thread *t,
						 struct mrcache_region *r, uintptr_t start,
						 uintptr_t end, unsigned access)
{
	uint64_t old = __atomic_fetch_add(&r->refstate, 1, __ATOMIC_SEQ_CST);
	uintptr_t rstart, rend;

	if (hit_valid(r, old, start, end, access, &rstart, &rend)) {
		count_hit(c, t, rstart, rend, start, end);
		return 1;
	}
	region_unref(c, r);
	return 0;
}

/* A free slot of this thread's, now holding r; NULL when all are taken. */
static inline struct mrcache_region **slot_publish(struct mrcache *c, struct mrc_thread *t,
						   struct mrcache_region *r)
{
	if (__builtin_expect(t == &c->threads->shared, 0) || !MRC_HAZARD_SLOTS)
		return NULL;
	for (int i = 0; i < MRC_THREAD_SLOTS; i++) {
		struct mrcache_region *none = NULL;

		if (!__atomic_load_n(&t->slot[i], __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&t->slot[i], &none, r, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return &t->slot[i];
	}
	return NULL;
}

/* The lock-free hit: publish r in one of this thread's hazard slots, then
 * (the slot's compare-and-swap and this load both seq_cst) read its word
 * and check it.  Reclaim marks a region DEAD before it reads the slots, so
 * either it sees this slot and leaves r alone, or this load sees DEAD (or
 * the word of r's next life, which the checks then judge) and the hit
 * fails.  A hit writes only this thread's block: the slot and the count. */
static int try_hit(struct mrcache *c, struct mrcache_region *r, uintptr_t start,
		   uintptr_t end, unsigned access)
{
	struct mrc_thread *t = mrc_thread_get(c->threads);
	struct mrcache_region **slot = slot_publish(c, t, r);
	uintptr_t rstart, rend;

	if (__builtin_expect(!slot, 0))
		return try_hit_ref(c, t, r, start, end, access);
	if (hit_valid(r, __atomic_load_n(&r->refstate, __ATOMIC_SEQ_CST), start, end, access,
		      &rstart, &rend)) {
		count_hit(c, t, rstart, rend, start, end);
		return 1;
	}
	/* A put of r by another thread (mrc_threads_clear_any) may have
	 * cleared this slot, taking it for a hold: a hold it should have
	 * released still sits in some slot or in the count.  Release it now,
	 * or it stays there and r is never reclaimed. */
	if (!slot_clear(c, slot, r))
		region_unref(c, r);
	return 0;
}

static int cache_hit(struct mrcache *c, uintptr_t start, uintptr_t end, unsigned access,
		     struct mrcache_region **out)
{
	struct mrcache_region *r = mrc_index_lookup(c->index, start);

	if (!r || !try_hit(c, r, start, end, access))
		return 0;
	*out = r;
	return 1;
}

/* --- the miss path (under the lock) --- */

struct overlap {
	uintptr_t start, end;
	unsigned access;		/* with the request's class */
	unsigned count;
	unsigned foreign;		/* regions of another flag class */
	struct mrcache_region *first;
};

static int note_overlap(struct mrcache_region *r, void *arg)
{
	struct overlap *ov = arg;

	if (region_start(r) < ov->start)
		ov->start = region_start(r);
	if (region_end(r) > ov->end)
		ov->end = region_end(r);
	ov->access |= region_access(r);
	if (region_class(r) != (ov->access & REGION_CLASS_BITS))
		ov->foreign++;
	if (!ov->count++)
		ov->first = r;
	return 0;
}

static int kill_merged(struct mrcache_region *r, void *arg)
{
	region_kill(arg, r, MRCACHE_CAUSE_MANUAL, KILL_MERGED);
	return 0;
}

/* Store r's user pointer, allocating its slab's array on first use. */
static int region_set_user(struct mrcache_region *r, void *user)
{
	struct mrc_slab *slab = region_slab(r);

	if (!slab->user) {
		slab->user = calloc(REGION_SLAB_REGIONS, sizeof(void *));
		if (!slab->user)
			return -ENOMEM;
	}
	slab->user[r - slab->hot] = user;
	return 0;
}

/* What a get asked beyond the range and access. */
struct get_req {
	uint64_t flags;			/* backend flags, hints included */
	void *user;
};

static int backend_reg(struct mrcache *c, struct mrcache_region *r, const struct get_req *req)
{
	/* Regions this one merged, queued for reclaim, may hold the backend
	 * room it needs (a full io_uring table): deregister them first. */
	if (c->reclaim_count)
		reclaim_flush(c);
	for (;;) {
		uint64_t t0 = mrc_now_ns(), dt;
		void *user = req->user;
		int rc;

		rc = c->backend->ops->reg(c->backend, (void *)region_start(r),
					  region_end(r) - region_start(r), region_access(r),
					  req->flags, &region_cold(r)->reg, &user);
		if (rc == 0 && user && region_set_user(r, user)) {
			dereg_one(c, r);
			rc = -ENOMEM;
		}

		dt = mrc_now_ns() - t0;
		c->st.register_ns += dt;
		if (mrc_prof_on)
			mrc_prof_add(MRC_PROF_REGISTER, dt);
		if (rc == 0) {
			c->st.registrations++;
			return 0;
		}
		c->st.registration_failures++;
		if (!mrc_backend_resource_error(rc) || !evict_one(c))
			return rc;
	}
}

static int monitor_watch(struct mrcache *c, struct mrcache_region *r)
{
	for (;;) {
		uint64_t t0 = mrc_prof_on ? mrc_now_ns() : 0;	/* a read can be a system call */
		int rc = c->monitor->ops->watch(c->monitor, region_start(r), region_end(r),
						(uint64_t)(uintptr_t)r, &r->watch);

		if (mrc_prof_on)
			mrc_prof_add(MRC_PROF_WATCH, mrc_now_ns() - t0);
		if (rc == 0)
			return 0;
		if (!mrc_backend_resource_error(rc) || !evict_one(c))
			return rc;
	}
}

/* Register [start, end) (page aligned) and hand it out with one reference.
 * Returns -ESTALE when the range was unmapped during registration. */
static int cache_register(struct mrcache *c, uintptr_t start, uintptr_t end,
			  unsigned access, const struct get_req *req,
			  struct mrcache_region **out)
{
	struct overlap ov = { .start = start, .end = end, .access = access };
	struct mrcache_region *r;
	int uncached = c->disabled || (uint64_t)end > MRC_INDEX_LIMIT;
	uint64_t seq = 0;
	int rc, intact;

	if (!uncached)
		mrc_index_walk(c->index, start, end, note_overlap, &ov);
	/* A range cached with other backend flags keeps its registration;
	 * this one is handed out uncached rather than evict it. */
	if (ov.count && ((c->cfg.flags & MRCACHE_FLAG_NO_MERGE) || ov.foreign)) {
		uncached = 1;
	} else if (ov.count) {
		mrc_index_walk(c->index, start, end, kill_merged, c);
		start = ov.start;
		end = ov.end;
		access = ov.access;
	}
	if (!uncached && !make_room(c, end - start))
		uncached = 1;

	r = region_alloc(c);
	if (!r)
		return -ENOMEM;
	region_set_range(r, start, end, access);
	rc = monitor_watch(c, r);
	if (rc) {
		region_discard(c, r, 0, 0, 0);
		return rc;
	}
	if (!uncached) {
		rc = mrc_index_set(c->index, start, end, r);
		if (rc == 0) {
			region_touch(c, r);
			rc = mrc_lru_add(&c->lru, r);
			if (rc)
				mrc_index_clear(c->index, start, end, r);
		}
		if (rc) {
			region_discard(c, r, 0, 1, 0);
			return rc;
		}
	}
	/* The index is the watch set of user-side monitors: the pending
	 * region must be visible to them before anything is pinned.  This
	 * read-modify-write is the full barrier that orders the two. */
	seq = __atomic_fetch_add(&c->unmap_seq, 0, __ATOMIC_SEQ_CST);

	rc = backend_reg(c, r, req);
	if (rc) {
		region_discard(c, r, !uncached, 1, 0);
		return rc;
	}

	/* The re-check.  An uncached region is not in the index, so a
	 * user-side monitor cannot clear its word: any unmap counts. */
	if (uncached && c->user_side_monitor)
		intact = __atomic_load_n(&c->unmap_seq, __ATOMIC_SEQ_CST) == seq;
	else
		intact = region_intact(r);
	if (!intact) {
		region_discard(c, r, !uncached, 1, 1);
		c->st.retries++;
		return -ESTALE;
	}

	if (uncached) {
		region_cold(r)->flags |= REGION_UNCACHED;
		c->outstanding_uncached++;
		c->st.uncached++;
		/* Published dead: never found, deregistered at its put. */
		__atomic_fetch_add(&r->refstate, 1 - REF_PENDING + REF_DEAD, __ATOMIC_RELEASE);
	} else {
		region_cold(r)->flags |= REGION_INDEXED;
		c->nregions++;
		c->nbytes += end - start;
		__atomic_fetch_add(&r->refstate, 1 - REF_PENDING, __ATOMIC_RELEASE);
	}
	*out = r;
	return 0;
}

static int cache_get_slow(struct mrcache *c, uintptr_t start, uintptr_t end,
			  unsigned access, const struct get_req *req,
			  struct mrcache_region **out)
{
	uintptr_t mask = c->page_size - 1;
	uintptr_t pstart = start & ~mask, pend;
	int rc = -ESTALE;

	if (__builtin_add_overflow(end, mask, &pend))
		return -EINVAL;
	pend &= ~mask;
	/* Before any watch: a monitor's refusal of such a range must not
	 * hide the backend's limit (uffd gave -EFAULT for 2 GiB). */
	if (c->backend->max_len && pend - pstart > c->backend->max_len) {
		cache_log(c, 0, "a get of %zu bytes: the %s backend registers at most %zu",
			(size_t)(pend - pstart), c->backend->ops->name, c->backend->max_len);
		return -E2BIG;
	}

	mrc_cache_lock(c);
	mrc_cache_drain_locked(c);
	c->st.misses++;
	lru_tick(c);
	for (int attempt = 0; rc == -ESTALE && attempt < MAX_RACE_RETRIES; attempt++) {
		struct mrcache_region *r = mrc_index_lookup(c->index, start);

		if (r && !region_intact(r)) {
			/* Invalidated but not reported yet (a word a monitor
			 * cleared under a race with region reuse). */
			region_kill(c, r, MRCACHE_CAUSE_OTHER, KILL_INVALIDATED);
		} else if (r && region_covers(r, start, end, access)) {
			/* Another thread registered it while we waited. */
			__atomic_fetch_add(&r->refstate, 1, __ATOMIC_ACQUIRE);
			c->st.misses--;
			count_hit(c, mrc_thread_get(c->threads), region_start(r), region_end(r),
				  start, end);
			*out = r;
			rc = 0;
			break;
		}
		rc = cache_register(c, pstart, pend, access, req, out);
	}
	if (rc == -ESTALE)
		rc = -EAGAIN;
	mrc_cache_unlock(c);
	return rc;
}

static int check_range(const void *addr, size_t len, uintptr_t *end)
{
	if (!addr || !len || __builtin_add_overflow((uintptr_t)addr, len, end))
		return -EINVAL;
	return 0;
}

/* mrcache_get() while the profiler runs: the same, timed. */
static int get_profiled(struct mrcache *c, uintptr_t start, uintptr_t end, unsigned access,
			const struct get_req *req, struct mrcache_region **out)
{
	uint64_t t0 = mrc_now_ns();
	int rc;

	if (cache_hit(c, start, end, access, out)) {
		mrc_prof_add(MRC_PROF_LOOKUP, mrc_now_ns() - t0);
		return 0;
	}
	rc = cache_get_slow(c, start, end, access, req, out);
	mrc_prof_add_span(MRC_PROF_MISS, t0);
	return rc;
}

/* The get after the checks; access carries the flag class. */
static inline int cache_get(struct mrcache *c, uintptr_t start, uintptr_t end, unsigned access,
			    const struct get_req *req, struct mrcache_region **out)
{
	if (c->settle)
		c->settle(c->monitor);
	if (__builtin_expect(mrc_prof_on, 0))
		return get_profiled(c, start, end, access, req, out);
	if (cache_hit(c, start, end, access, out))
		return 0;
	return cache_get_slow(c, start, end, access, req, out);
}

int mrcache_get(struct mrcache *c, const void *addr, size_t len, unsigned access,
		struct mrcache_region **out)
{
	static const struct get_req none;
	uintptr_t start = (uintptr_t)addr, end;
	int rc;

	if (!c || !out || (access & ~MRCACHE_ACCESS_ALL) || check_range(addr, len, &end))
		return -EINVAL;
	if (forked(c))
		return -ECHILD;
	rc = reentered(c, "mrcache_get");
	if (rc)
		return rc;
	return cache_get(c, start, end, access, &none, out);
}

/* --- backend flags --- */

static int find_class(const struct mrcache *c, uint64_t key, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		if (c->flag_class[i] == key)
			return (int)i;
	return 0;
}

/* The class of the keyed flags `key` (not 0), added on first use. */
static int flag_class(struct mrcache *c, uint64_t key)
{
	unsigned n = __atomic_load_n(&c->nflag_classes, __ATOMIC_ACQUIRE);
	int cls = find_class(c, key, n);

	if (cls)
		return cls;
	mrc_cache_lock(c);
	n = c->nflag_classes;
	cls = find_class(c, key, n);
	if (!cls && n < MRC_FLAG_CLASSES) {
		c->flag_class[n] = key;
		__atomic_store_n(&c->nflag_classes, n + 1, __ATOMIC_RELEASE);
		cls = (int)n;
	}
	mrc_cache_unlock(c);
	if (!cls) {
		cache_log(c, 0, "backend flags %#llx: this cache already tells %u flag sets apart",
			(unsigned long long)key, MRC_FLAG_CLASSES - 1);
		return -ENOSPC;
	}
	return cls;
}

/* The first struct mrcache_get_attr. */
#define GET_ATTR_SIZE_VER0 (offsetof(struct mrcache_get_attr, user) + sizeof(void *))

static int get_attr_copy_in(struct mrcache_get_attr *to, const struct mrcache_get_attr *from,
			    size_t size)
{
	const unsigned char *tail = (const unsigned char *)from;

	memset(to, 0, sizeof(*to));
	if (!from)
		return 0;
	if (size < GET_ATTR_SIZE_VER0)
		return -EINVAL;
	for (size_t i = sizeof(*to); i < size; i++)
		if (tail[i])
			return -E2BIG;
	memcpy(to, from, size < sizeof(*to) ? size : sizeof(*to));
	return 0;
}

int mrcache_get_ex_sized(struct mrcache *c, const void *addr, size_t len, unsigned access,
			 const struct mrcache_get_attr *attr, size_t attr_size,
			 struct mrcache_region **out)
{
	struct mrcache_get_attr a;
	struct get_req req;
	uintptr_t start = (uintptr_t)addr, end;
	uint64_t key;
	int rc;

	if (!c || !out || (access & ~MRCACHE_ACCESS_ALL) || check_range(addr, len, &end))
		return -EINVAL;
	rc = get_attr_copy_in(&a, attr, attr_size);
	if (rc)
		return rc;
	if (a.backend_flags & ~c->backend->flags_ok) {
		cache_log(c, 0, "backend flags %#llx: the %s backend does not take %#llx",
			(unsigned long long)a.backend_flags, c->backend->ops->name,
			(unsigned long long)(a.backend_flags & ~c->backend->flags_ok));
		return -EINVAL;
	}
	if (forked(c))
		return -ECHILD;
	rc = reentered(c, "mrcache_get_ex");
	if (rc)
		return rc;
	key = a.backend_flags & ~c->backend->flags_shared;
	if (key) {
		rc = flag_class(c, key);
		if (rc < 0)
			return rc;
		access |= (unsigned)rc << REGION_CLASS_SHIFT;
	}
	req.flags = a.backend_flags;
	req.user = a.user;
	return cache_get(c, start, end, access, &req, out);
}

static int events_waiting(struct mrcache *c)
{
	return __atomic_load_n(&c->events_waiting, __ATOMIC_RELAXED) ||
	       (c->pending && c->pending(c->monitor));
}

/* Clear the slot of this thread's that holds r, if one does. */
static inline int put_slot(struct mrcache *c, struct mrcache_region *r)
{
	struct mrc_thread *t = mrc_thread_get(c->threads);

	for (int i = 0; i < MRC_THREAD_SLOTS; i++)
		if (__atomic_load_n(&t->slot[i], __ATOMIC_RELAXED) == r)
			return slot_clear(c, &t->slot[i], r);
	return 0;
}

int mrcache_put(struct mrcache *c, struct mrcache_region *r)
{
	int rc;

	if (!c || !r)
		return -EINVAL;
	if (forked(c))
		return -ECHILD;
	rc = reentered(c, "mrcache_put");
	if (rc)
		return rc;
	if (!mrc_region_is_ours(c, r)) {
		cache_log(c, 0, "mrcache_put of a region this cache did not hand out");
		return -EINVAL;
	}
	region_touch(c, r);
	rc = put_slot(c, r) ? 0 : region_unref(c, r);
	/* Reclaim what the monitor invalidated, unless someone else is. */
	if (events_waiting(c) && cache_trylock(c)) {
		mrc_cache_drain_locked(c);
		mrc_cache_unlock(c);
	}
	return rc;
}

/* --- accessors --- */

void *mrcache_region_addr(const struct mrcache_region *r)
{
	return r ? (void *)region_start(r) : NULL;
}

size_t mrcache_region_length(const struct mrcache_region *r)
{
	return r ? region_end(r) - region_start(r) : 0;
}

uint64_t mrcache_region_key(const struct mrcache_region *r)
{
	return r ? region_cold(r)->reg.key : 0;
}

void *mrcache_region_handle(const struct mrcache_region *r)
{
	return r ? region_cold(r)->reg.handle : NULL;
}

uint32_t mrcache_region_rkey(const struct mrcache_region *r)
{
	return r ? region_cold(r)->reg.rkey : 0;
}

void *mrcache_region_user(const struct mrcache_region *r)
{
	void **user = r ? region_slab(r)->user : NULL;

	return user ? user[r - region_slab(r)->hot] : NULL;
}

/* --- whole-cache operations --- */

static int kill_manual(struct mrcache_region *r, void *arg)
{
	struct mrcache *c = arg;

	region_kill(c, r, MRCACHE_CAUSE_MANUAL, KILL_INVALIDATED);
	return 0;
}

int mrcache_invalidate(struct mrcache *c, const void *addr, size_t len)
{
	uintptr_t end;
	uint64_t before;
	int rc;

	if (!c || check_range(addr, len, &end))
		return -EINVAL;
	if (forked(c))
		return -ECHILD;
	rc = reentered(c, "mrcache_invalidate");
	if (rc)
		return rc;
	mrc_cache_lock(c);
	mrc_cache_drain_locked(c);
	before = c->st.invalidations[MRCACHE_CAUSE_MANUAL];
	mrc_index_walk(c->index, (uintptr_t)addr, end, kill_manual, c);
	before = c->st.invalidations[MRCACHE_CAUSE_MANUAL] - before;
	mrc_cache_unlock(c);
	return (int)before;
}

static int flush_locked(struct mrcache *c)
{
	struct mrcache_region *r;
	int n = 0;

	while ((r = mrc_lru_pop(&c->lru, region_evictable, c))) {
		region_kill(c, r, MRCACHE_CAUSE_MANUAL, KILL_FLUSHED);
		n++;
	}
	return n;
}

/* The frame of a whole-cache call: checks, the lock, reclaim of what the
 * monitor reported, then `op` if any.  Returns op's count, else drain's. */
static int whole_cache_call(struct mrcache *c, int (*op)(struct mrcache *), const char *fn)
{
	int n;

	if (!c)
		return -EINVAL;
	if (forked(c))
		return -ECHILD;
	n = reentered(c, fn);
	if (n)
		return n;
	mrc_cache_lock(c);
	n = mrc_cache_drain_locked(c);
	if (op)
		n = op(c);
	mrc_cache_unlock(c);
	return n;
}

int mrcache_flush(struct mrcache *c)
{
	return whole_cache_call(c, flush_locked, "mrcache_flush");
}

int mrcache_progress(struct mrcache *c)
{
	return whole_cache_call(c, NULL, "mrcache_progress");
}

/* --- create/destroy --- */

static void cache_free(struct mrcache *c)
{
	for (size_t i = 0; i < c->slabs.count; i++)
		free(((struct mrc_slab *)(c->slabs.arena.base + i * REGION_SLAB_BYTES))->user);
	mrc_slabset_fini(&c->slabs);
	mrc_lru_fini(&c->lru);
	mrc_index_destroy(c->index);
	mrc_threads_destroy(c->threads);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int mrc_cache_create(const struct mrcache_config *cfg, struct mrcache **out)
{
	const char *saved_name;
	struct mrcache *c;
	int rc;

	if (!cfg || !out)
		return -EINVAL;
	/* Not calloc(): its 16-byte alignment is not the struct's. */
	c = aligned_alloc(_Alignof(struct mrcache), sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c, 0, sizeof(*c));
	pthread_once(&fork_once, fork_handler_install);
	c->fork_generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);
	pthread_mutex_init(&c->lock, NULL);
	mrc_lru_init(&c->lru, &c->slabs);
	mrc_prof_init();
	c->page_size = (size_t)sysconf(_SC_PAGESIZE);
	c->nflag_classes = 1;		/* class 0: no keyed flags */
	rc = mrc_config_resolve(cfg, &c->cfg, c->name);
	saved_name = mrc_log_name(c->name[0] ? c->name : NULL);
	c->disabled = (c->cfg.flags & MRCACHE_FLAG_DISABLE) != 0;
	if (rc == 0)
		rc = mrc_threads_create(c, &c->threads);
	if (rc == 0)
		rc = mrc_index_create(&c->index);
	if (rc == 0)
		rc = mrc_backend_open(&c->cfg, &c->backend);
	if (rc) {
		mrc_log_name(saved_name);
		cache_free(c);
		return rc;
	}
	rc = mrc_monitor_start(c, c->cfg.monitor, &c->monitor);
	mrc_log_name(saved_name);
	if (rc) {
		c->backend->ops->close(c->backend);
		cache_free(c);
		return rc;
	}
	c->user_side_monitor = c->monitor->ops->drain == NULL;
	c->settle = c->monitor->ops->settle;
	c->pending = c->monitor->ops->pending;
	c->st.monitor = c->monitor->ops->kind;
	*out = c;
	return 0;
}

/* Under the lock.  Dead regions waiting in c->reclaim are reclaimed
 * first: only those that something still holds keep outstanding_dead up. */
static int regions_in_use(struct mrcache *c)
{
	reclaim_flush(c);
	if (c->outstanding_uncached || c->outstanding_dead || mrc_threads_any_held(c->threads))
		return 1;
	for (uint32_t i = 0; i < c->lru.count; i++) {
		const struct mrcache_region *r = mrc_lru_at(&c->lru, i);

		if (r && __atomic_load_n(&r->refstate, __ATOMIC_ACQUIRE) & REF_COUNT_MASK)
			return 1;
	}
	return 0;
}

int mrcache_destroy(struct mrcache *c)
{
	const char *saved;
	int rc;

	if (!c)
		return -EINVAL;
	if (forked(c)) {
		/* The registrations and the monitor are the parent's: free
		 * only this process's copy of the memory. */
		cache_free(c);
		return 0;
	}
	rc = reentered(c, "mrcache_destroy");
	if (rc)
		return rc;
	mrc_cache_lock(c);
	mrc_cache_drain_locked(c);
	if (regions_in_use(c)) {
		mrc_cache_unlock(c);
		cache_log(c, 0, "mrcache_destroy: regions are still in use");
		return -EBUSY;
	}
	flush_locked(c);
	mrc_cache_unlock(c);
	if (c->cfg.flags & MRC_FLAG_STATS_AT_DESTROY)
		mrcache_stats_print(c, stderr);
	saved = mrc_log_name(c->name[0] ? c->name : NULL);
	c->monitor->ops->stop(c->monitor);
	c->backend->ops->close(c->backend);
	mrc_log_name(saved);
	cache_free(c);
	return 0;
}
