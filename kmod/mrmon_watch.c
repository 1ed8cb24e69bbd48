// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_watch.c - the interval tree of watches: WATCH, UNWATCH, and the
 * clearing an invalidation does (mrmon_notify.c calls it).
 *
 * One struct mmu_notifier per descriptor, and behind it this tree, all
 * under ctx->lock (the kdreg2 shape).  The collision protocol is the
 * kernel's own range tracking (KVM's mmu_invalidate_in_progress and
 * mmu_invalidate_range_start/end, kept per invalidation):
 * invalidate_range_start records its range in ctx->inflight (beyond
 * MRMON_INFLIGHT of them, in the union ctx->wide) before it clears
 * anything; invalidate_range_end removes it.
 *
 * WATCH (mrmon_watch_one)                 any thread changing the range
 * -----------------------                 -----------------------------
 * a watch: reused, or allocated (no lock)
 * spin_lock(ctx->lock)                    invalidate_range_start
 * an active invalidation overlaps?          (mrmon_mn_start):
 *   yes: unlock, report NOT ARMED           spin_lock(ctx->lock)
 * take a slot, a new generation g           record the range in flight
 * word = g << 1 | 1 (store-release)         for each overlapping watch:
 * insert into the tree                        word &= ~1 (store-release)
 * spin_unlock                                 queue its event
 * return {slot, g << 1 | 1}                   remove it (kept for reuse)
 *                                           spin_unlock
 *                                         change the page tables
 *                                         invalidate_range_end
 *                                           (mrmon_mn_end): remove it
 *
 * Both sides hold ctx->lock, so each WATCH is ordered against each
 * invalidation start.  An invalidation that started before the insert is
 * either over (its page-table change is done: what the caller registers
 * next is the new mapping) or still active, and then WATCH refuses the
 * range if it overlaps; one that starts after the insert finds the watch
 * in the tree and clears its word, which the caller's re-check after
 * registering sees.  No sleep, no mmu_interval_read_begin().
 *
 * An invalidation clears each watch at most once: the watch leaves the
 * tree in the callback that clears it.  One operation over V VMAs (V
 * invalidate_range_start calls) therefore costs O(V log n + W), W the
 * watches it clears, n the watches in the tree.
 *
 * UNWATCH clears the word and removes the watch under ctx->lock: an
 * unmapping call either ran its start before (the watch is already gone:
 * -ESTALE) or after (the watch is not in the tree any more).
 */
#include <linux/interval_tree_generic.h>
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include "mrmon.h"

#define MRMON_WATCH_START(w)	((w)->start)
#define MRMON_WATCH_LAST(w)	((w)->last)

INTERVAL_TREE_DEFINE(struct mrmon_watch, rb, unsigned long, subtree_last,
		     MRMON_WATCH_START, MRMON_WATCH_LAST, static, mrmon_itree)

static struct kmem_cache *mrmon_watch_cache;

static u64 mrmon_watch_span(const struct mrmon_watch *w)
{
	return (u64)w->last - w->start + 1;
}

int mrmon_watch_cache_init(void)
{
	mrmon_watch_cache = KMEM_CACHE(mrmon_watch, SLAB_ACCOUNT);
	return mrmon_watch_cache ? 0 : -ENOMEM;
}

void mrmon_watch_cache_exit(void)
{
	kmem_cache_destroy(mrmon_watch_cache);
}

struct mrmon_watch *mrmon_watch_alloc(void)
{
	return kmem_cache_alloc(mrmon_watch_cache, GFP_KERNEL_ACCOUNT);
}

void mrmon_watch_free(struct mrmon_watch *w)
{
	if (w)
		kmem_cache_free(mrmon_watch_cache, w);
}

/**
 * mrmon_slots_alloc() - SETUP's slot table, every slot free
 * @ctx: the descriptor, not set up; ctx->mutex held
 * @nslots: how many slots, at least 1
 *
 * The free stack holds slot 0 on top, so a new descriptor hands out 0, 1,
 * 2, ...; after that the slot freed last is the first reused.
 *
 * Return: 0, or -ENOMEM (with what was allocated left for
 * mrmon_slots_free()).
 */
int mrmon_slots_alloc(struct mrmon_ctx *ctx, u32 nslots)
{
	u32 i;

	lockdep_assert_held(&ctx->mutex);
	/* Sized by the caller: a failure is its -ENOMEM, not a kernel splat. */
	ctx->slot_watch = kvcalloc(nslots, sizeof(*ctx->slot_watch),
				   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	ctx->free_slots = kvmalloc_array(nslots, sizeof(*ctx->free_slots),
					 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	ctx->limbo = kvmalloc_array(nslots, sizeof(*ctx->limbo),
				    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ctx->slot_watch || !ctx->free_slots || !ctx->limbo)
		return -ENOMEM;
	for (i = 0; i < nslots; i++)
		ctx->free_slots[i] = nslots - 1 - i;
	ctx->nfree = nslots;
	return 0;
}

/* A failed SETUP, or a context being freed.  Any context (kvfree). */
void mrmon_slots_free(struct mrmon_ctx *ctx)
{
	kvfree(ctx->slot_watch);
	kvfree(ctx->free_slots);
	kvfree(ctx->limbo);
	ctx->slot_watch = NULL;
	ctx->free_slots = NULL;
	ctx->limbo = NULL;
	ctx->nfree = 0;
}

/* Under ctx->lock: a slot without a watch and without a pending event. */
void mrmon_slot_put(struct mrmon_ctx *ctx, u32 slot)
{
	lockdep_assert_held(&ctx->lock);
	ctx->free_slots[ctx->nfree++] = slot;
}

/* Under ctx->lock: a slot whose event was lost waits for the OVERFLOW. */
void mrmon_limbo_push(struct mrmon_ctx *ctx, u32 slot)
{
	lockdep_assert_held(&ctx->lock);
	ctx->limbo[(ctx->limbo_head + ctx->nlimbo++) % ctx->nslots] = slot;
}

static void mrmon_word_set(struct mrmon_ctx *ctx, u32 slot, u64 value)
{
	lockdep_assert_held(&ctx->lock);
	/* The hit path's acquire load of the word pairs with this. */
	smp_store_release(&ctx->words[slot], value);
}

/* Under ctx->lock: does an invalidation in flight overlap [start, end)? */
static bool mrmon_collides(const struct mrmon_ctx *ctx, unsigned long start,
			   unsigned long end)
{
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < ctx->ninflight; i++)
		if (start < ctx->inflight[i].end && end > ctx->inflight[i].start)
			return true;
	return ctx->wide && start < ctx->wide_end && end > ctx->wide_start;
}

/* Under ctx->lock: a watch out of the tree and its slot, kept for reuse. */
static void mrmon_watch_dead(struct mrmon_ctx *ctx, struct mrmon_watch *w)
{
	lockdep_assert_held(&ctx->lock);
	w->dead_next = ctx->dead_list;
	ctx->dead_list = w;
}

/* Under ctx->lock: UNWATCH's watch leaves the tree and its slot; its word
 * was cleared by the caller.  The caller keeps it for reuse.
 */
static void mrmon_watch_unlink(struct mrmon_ctx *ctx, struct mrmon_watch *w)
{
	lockdep_assert_held(&ctx->lock);
	mrmon_itree_remove(w, &ctx->tree);
	ctx->slot_watch[w->slot] = NULL;
	mrmon_mm_watch_sub(ctx->mm_count, 1, mrmon_watch_span(w));
}

/**
 * mrmon_watch_one() - WATCH one range
 * @ctx: the descriptor, set up; current->mm == ctx->mm; no lock held
 * @r: the entry, copied from user space; slot and expected filled in
 * @spare: a watch the caller holds (allocated, or reused from
 *         ctx->dead_list), or NULL; taken (set to NULL) when the watch is
 *         made
 *
 * Return: 0 (armed, or not armed with r->expected 0); -EINVAL for a bad
 * entry; -ENOSPC with every slot in use; -E2BIG for a range larger than
 * the span limit; -EDQUOT with max_watches_per_mm watches in the mm or
 * past the span limit (mrmon_mm.c); -ENOMEM without memory.
 */
int mrmon_watch_one(struct mrmon_ctx *ctx, struct mrmon_range *r,
		    struct mrmon_watch **spare)
{
	unsigned long start, end;
	struct mrmon_watch *w;
	int ret;

	if (r->flags || r->slot || r->expected || !r->len ||
	    r->start + r->len < r->start)
		return -EINVAL;
	start = r->start & PAGE_MASK;
	end = PAGE_ALIGN(r->start + r->len);
	/* The sum does not overflow, so only the rounding can wrap, to 0
	 * (for start 0, `end < r->start` would miss it).
	 */
	if (!end || end > TASK_SIZE)
		return -EINVAL;
	/* A watch an invalidation or UNWATCH left is reused; memory is
	 * allocated only when there is none (no lock held).
	 */
	if (!*spare && !READ_ONCE(ctx->dead_list)) {
		*spare = mrmon_watch_alloc();
		if (!*spare)
			return -ENOMEM;
	}
	spin_lock(&ctx->lock);
	if (!*spare) {
		*spare = ctx->dead_list;
		if (*spare) {
			ctx->dead_list = (*spare)->dead_next;
		} else {
			/* Another thread took the last one meanwhile. */
			spin_unlock(&ctx->lock);
			*spare = mrmon_watch_alloc();
			if (!*spare)
				return -ENOMEM;
			spin_lock(&ctx->lock);
		}
	}
	w = *spare;
	w->start = start;
	w->last = end - 1;
	w->cookie = r->cookie;
	if (mrmon_collides(ctx, start, end)) {
		spin_unlock(&ctx->lock);
		r->slot = 0;
		r->expected = 0;
		return 0;
	}
	ret = mrmon_mm_watch_add(ctx->mm_count, &ctx->lim, mrmon_watch_span(w));
	if (ret)
		goto unlock;
	if (!ctx->nfree) {
		mrmon_mm_watch_sub(ctx->mm_count, 1, mrmon_watch_span(w));
		ret = -ENOSPC;
		goto unlock;
	}
	w->slot = ctx->free_slots[--ctx->nfree];
	w->gen = ++ctx->next_gen;
	ctx->slot_watch[w->slot] = w;
	mrmon_word_set(ctx, w->slot, mrmon_word_of(w->gen));
	mrmon_itree_insert(w, &ctx->tree);
	r->slot = w->slot;
	r->expected = mrmon_word_of(w->gen);
	*spare = NULL;
unlock:
	spin_unlock(&ctx->lock);
	return ret;
}

/**
 * mrmon_unwatch_one() - UNWATCH one watch
 * @ctx: the descriptor, set up; no lock held
 * @e: slot and expected, as WATCH returned them
 *
 * Return: 0; -EINVAL for a bad entry; -ESTALE if the slot does not hold
 * that watch (an invalidation already freed it, or it was unwatched).
 */
int mrmon_unwatch_one(struct mrmon_ctx *ctx, const struct mrmon_unwatch_entry *e)
{
	struct mrmon_watch *w;

	if (e->flags || e->slot >= ctx->nslots)
		return -EINVAL;
	spin_lock(&ctx->lock);
	/* A user's index: no speculative load past the table either. */
	w = ctx->slot_watch[array_index_nospec(e->slot, ctx->nslots)];
	if (!w || w->gen != e->expected >> 1) {
		spin_unlock(&ctx->lock);
		return -ESTALE;
	}
	mrmon_word_set(ctx, w->slot, w->gen << 1);
	mrmon_watch_unlink(ctx, w);
	mrmon_slot_put(ctx, w->slot);
	mrmon_watch_dead(ctx, w);
	spin_unlock(&ctx->lock);
	return 0;
}

/* Under ctx->lock: clear one watch's word and queue its event; the
 * caller unlinks it from the tree.
 */
static void mrmon_watch_clear(struct mrmon_ctx *ctx, struct mrmon_watch *w,
			      unsigned long start, unsigned long last, u32 cause)
{
	struct mrmon_event ev;

	/* Publishes the clear; the hit path pairs it with an acquire load. */
	mrmon_word_set(ctx, w->slot, w->gen << 1);
	ev.cookie = w->cookie;
	ev.start = max(start, w->start);
	ev.end = min(last, w->last) + 1;
	ev.generation = w->gen;
	ev.slot = w->slot;
	ev.cause = cause;
	ctx->slot_watch[w->slot] = NULL;
	if (!mrmon_event_push(ctx, &ev))
		mrmon_limbo_push(ctx, w->slot);
}

/* Under ctx->lock: is every watch of the tree inside [start, last]? */
static bool mrmon_tree_within(const struct mrmon_ctx *ctx, unsigned long start,
			      unsigned long last)
{
	struct rb_node *first = rb_first_cached(&ctx->tree), *root = ctx->tree.rb_root.rb_node;

	return first && start <= rb_entry(first, struct mrmon_watch, rb)->start &&
	       last >= rb_entry(root, struct mrmon_watch, rb)->subtree_last;
}

/**
 * mrmon_watches_clear() - an invalidation of [start, end) has started
 * @ctx: the descriptor; ctx->lock held
 * @start: first byte
 * @end: one past the last byte (may be far wider than any watch)
 * @cause: MRMON_CAUSE_*
 *
 * Clears the word of every watch overlapping the range, queues its event
 * and unlinks it: each watch is paid for once.  The watches go on the
 * dead list (reused by WATCH, freed at close, never here); the slot stays
 * reserved until its event is read (or, if the queue was full, until the
 * overflow is reported).  When the range covers the whole tree (an
 * munmap or MADV_DONTNEED over everything watched, exit) the tree is
 * emptied in one in-order pass without rebalancing.
 *
 * Return: how many words it cleared.
 */
unsigned int mrmon_watches_clear(struct mrmon_ctx *ctx, unsigned long start,
				 unsigned long end, u32 cause)
{
	unsigned long last = end - 1;
	struct mrmon_watch *w, *next;
	unsigned int n = 0;
	u64 span = 0;

	lockdep_assert_held(&ctx->lock);
	if (mrmon_tree_within(ctx, start, last)) {
		struct rb_root_cached tree = ctx->tree;

		ctx->tree = RB_ROOT_CACHED;
		rbtree_postorder_for_each_entry_safe(w, next, &tree.rb_root, rb) {
			mrmon_watch_clear(ctx, w, start, last, cause);
			span += mrmon_watch_span(w);
			mrmon_watch_dead(ctx, w);
			n++;
		}
	} else {
		for (w = mrmon_itree_iter_first(&ctx->tree, start, last); w; w = next) {
			next = mrmon_itree_iter_next(w, start, last);
			mrmon_itree_remove(w, &ctx->tree);
			mrmon_watch_clear(ctx, w, start, last, cause);
			span += mrmon_watch_span(w);
			mrmon_watch_dead(ctx, w);
			n++;
		}
	}
	if (n) {
		mrmon_mm_watch_sub(ctx->mm_count, n, span);
		WRITE_ONCE(ctx->hdr->invalidations, ctx->hdr->invalidations + n);
	}
	return n;
}

/**
 * mrmon_dead_free() - free the watches kept for reuse
 * @ctx: the descriptor, closing; no lock held; process context
 *
 * The watches an invalidation or UNWATCH unlinked wait on ctx->dead_list
 * for the next WATCH, which reuses them instead of allocating: neither
 * the callback nor read() frees memory, and WATCH allocates only past the
 * peak of live watches.  The list is at most that peak (plus one per
 * thread racing in WATCH), all charged to the opener's memory cgroup as
 * the live watches were; release frees it, 16 objects per call to the
 * slab allocator.
 */
void mrmon_dead_free(struct mrmon_ctx *ctx)
{
	struct mrmon_watch *w;

	if (!READ_ONCE(ctx->dead_list))
		return;
	spin_lock(&ctx->lock);
	w = ctx->dead_list;
	ctx->dead_list = NULL;
	spin_unlock(&ctx->lock);
	while (w) {
		void *batch[16];
		size_t n = 0;

		for (; w && n < ARRAY_SIZE(batch); w = w->dead_next)
			batch[n++] = w;
		kmem_cache_free_bulk(mrmon_watch_cache, n, batch);
	}
}

/*
 * The descriptor is closing: no ioctl can run.  The tree is taken out
 * whole under the lock (a callback after this finds it empty and the
 * context dead) and freed outside it.
 */
void mrmon_watches_free(struct mrmon_ctx *ctx)
{
	struct mrmon_watch *w, *n;
	struct rb_root_cached tree;
	unsigned long count = 0;
	u64 span = 0;

	spin_lock(&ctx->lock);
	ctx->dead = true;
	tree = ctx->tree;
	ctx->tree = RB_ROOT_CACHED;
	spin_unlock(&ctx->lock);
	rbtree_postorder_for_each_entry_safe(w, n, &tree.rb_root, rb) {
		span += mrmon_watch_span(w);
		mrmon_watch_free(w);
		count++;
	}
	mrmon_mm_watch_sub(ctx->mm_count, count, span);
	mrmon_dead_free(ctx);
}
