/* SPDX-License-Identifier: MIT */
/*
 * cache.c - get/put and the life of a region.
 *
 * The hit path takes no lock (see docs/architecture.md): it finds a region
 * in the lock-free index, takes a speculative reference, then validates
 * the region: live, covering the request, enough access, and its watch
 * word intact.  Everything else runs under cache->lock.
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

/* Deregister, unwatch and free the regions region_reclaim() queued: two
 * clock reads time the batch's deregistrations (deregister_ns is their
 * sum), one call of the monitor unwatches the lot (the kernel monitor's is
 * one UNWATCH ioctl), then each region goes back to the free list.  Under
 * the lock. */
static void reclaim_flush(struct mrcache *c)
{
	const struct mrc_monitor_ops *ops = c->monitor->ops;
	struct mrc_watch *w[MRC_RECLAIM_BATCH];
	uint32_t n = c->reclaim_count;
	uint64_t t0 = mrc_now_ns();

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

/* The last reference of a dead region is gone: deregister it.  Exactly
 * one caller wins the DEAD -> DEAD|RECLAIMED transition.  Its
 * deregistration, unwatch and free wait in c->reclaim for the end of the
 * lock section (or a full batch, or an eviction that needs the room), so a
 * drain that reclaims many regions handles them at once.  Under the lock. */
static inline void region_reclaim(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t expect = REF_DEAD;

	if (!__atomic_compare_exchange_n(&r->refstate, &expect, REF_DEAD | REF_RECLAIMED,
					 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	if (region_cold(r)->flags & REGION_UNCACHED)
		c->outstanding_uncached--;
	if (region_cold(r)->flags & REGION_DEAD_HELD) {
		region_cold(r)->flags &= ~REGION_DEAD_HELD;
		c->outstanding_dead--;
	}
	c->reclaim[c->reclaim_count++] = r;
	if (c->reclaim_count == MRC_RECLAIM_BATCH)
		reclaim_flush(c);
}

/* region_unref() when old, the word before its decrement, is not a plain
 * live region with references left. */
static int __attribute__((noinline)) region_unref_slow(struct mrcache *c,
						       struct mrcache_region *r, uint64_t old)
{
	if ((old & REF_COUNT_MASK) == 0) {
		__atomic_fetch_add(&r->refstate, 1, __ATOMIC_RELAXED);
		cache_log(c, 0, "mrcache_put of a region that is not held");
		return -EINVAL;
	}
	if (old - 1 == REF_DEAD) {
		mrc_cache_lock(c);
		region_reclaim(c, r);
		mrc_cache_unlock(c);
	}
	return 0;
}

/* Drop one reference.  Lock-free unless it was the last one of a dead
 * region, which is then deregistered here.  Inline, with the rare cases
 * out of line: every put and every failed hit drops one. */
static inline int region_unref(struct mrcache *c, struct mrcache_region *r)
{
	uint64_t old = __atomic_fetch_sub(&r->refstate, 1, __ATOMIC_ACQ_REL);

	if (__builtin_expect((old & REF_COUNT_MASK) != 0 && old - 1 != REF_DEAD, 1))
		return 0;
	return region_unref_slow(c, r, old);
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
	old = __atomic_fetch_or(&r->refstate, REF_DEAD, __ATOMIC_ACQ_REL);
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

static int region_evictable(const struct mrcache_region *r)
{
	return (__atomic_load_n(&r->refstate, __ATOMIC_ACQUIRE) &
		(REF_COUNT_MASK | REF_FLAGS)) == 0;
}

static void clock_sync(struct mrcache *c);

static int evict_one(struct mrcache *c)
{
	struct mrcache_region *victim;

	/* Regions queued for reclaim keep their registration and watch until
	 * the flush: that may be the room asked for. */
	if (c->reclaim_count) {
		reclaim_flush(c);
		return 1;
	}
	clock_sync(c);
	victim = mrc_lru_pop(&c->lru, region_evictable);

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

/* This thread's stripe number + 1; 0 until its first hit or put. */
static __thread unsigned stripe_plus_one;

static struct mrc_stripe *thread_stripe(struct mrcache *c)
{
	static unsigned next_thread;
	unsigned s = stripe_plus_one;

	if (__builtin_expect(!s, 0))
		s = stripe_plus_one =
			__atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED) % MRC_STRIPES + 1;
	return &c->stripes[s - 1];
}

/* Only this thread writes its stripe (see struct mrc_stripe). */
static void stripe_count(uint64_t *counter)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

static void region_touch(struct mrcache *c, struct mrcache_region *r)
{
	struct mrc_stripe *s = thread_stripe(c);
	uint64_t floor = __atomic_load_n(&c->clock_floor, __ATOMIC_RELAXED);
	uint64_t now = __atomic_load_n(&s->clock, __ATOMIC_RELAXED);

	now = (now > floor ? now : floor) + 1;
	__atomic_store_n(&s->clock, now, __ATOMIC_RELAXED);
	__atomic_store_n(&r->last_use, now, __ATOMIC_RELAXED);
}

/* Under the lock, before choosing a victim: bring every thread's clock up
 * to the newest use seen. */
static void clock_sync(struct mrcache *c)
{
	uint64_t top = __atomic_load_n(&c->clock_floor, __ATOMIC_RELAXED);

	for (int i = 0; i < MRC_STRIPES; i++) {
		uint64_t t = __atomic_load_n(&c->stripes[i].clock, __ATOMIC_RELAXED);

		if (t > top)
			top = t;
	}
	__atomic_store_n(&c->clock_floor, top, __ATOMIC_RELAXED);
}

/* A hit of the whole region (its first and last page asked for) or of a
 * sub-range.  [start, end) lies in the page-aligned [rstart, rend). */
static void count_hit(struct mrcache *c, uintptr_t rstart, uintptr_t rend,
		      uintptr_t start, uintptr_t end)
{
	struct mrc_stripe *s = thread_stripe(c);
	uintptr_t mask = c->page_size - 1;

	stripe_count(start - rstart <= mask && rend - end <= mask ? &s->hits : &s->subrange_hits);
}

static int region_covers(const struct mrcache_region *r, uintptr_t start,
			 uintptr_t end, unsigned access)
{
	return region_start(r) <= start && end <= region_end(r) &&
	       (access & ~region_access(r) & REGION_ACCESS_BITS) == 0 &&
	       (access & REGION_CLASS_BITS) == region_class(r);
}

/* The lock-free hit: a speculative reference, then the checks (the same
 * as region_covers(), on one load of each field), then the count.  A
 * failed check drops the reference again. */
static int try_hit(struct mrcache *c, struct mrcache_region *r, uintptr_t start,
		   uintptr_t end, unsigned access)
{
	uint64_t old = __atomic_fetch_add(&r->refstate, 1, __ATOMIC_ACQUIRE);
	uintptr_t rstart = region_start(r);
	uintptr_t end_access = __atomic_load_n(&r->end_access, __ATOMIC_RELAXED);
	uintptr_t rend = end_access & REGION_END_MASK;

	if (!(old & REF_FLAGS) && rstart <= start && end <= rend &&
	    (access & ~end_access & REGION_ACCESS_BITS) == 0 &&
	    ((access ^ end_access) & REGION_CLASS_BITS) == 0 && region_intact(r)) {
		count_hit(c, rstart, rend, start, end);
		return 1;
	}
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
			count_hit(c, region_start(r), region_end(r), start, end);
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
	rc = region_unref(c, r);
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

	while ((r = mrc_lru_pop(&c->lru, region_evictable))) {
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
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
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

static int regions_in_use(const struct mrcache *c)
{
	if (c->outstanding_uncached || c->outstanding_dead)
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
