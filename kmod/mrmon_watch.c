// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_watch.c - WATCH, UNWATCH and REVALIDATE of one range.
 *
 * WATCH (ctx->mutex held)                  any thread changing the range
 * -----------------------                  -----------------------------
 * allocate the watch, a free slot, a new
 *   generation g
 * word = g << 1 | 1   (under ctx->lock)
 * mmu_interval_notifier_insert             invalidate_range_start:
 *                                            callback clears the word
 * seq = mmu_interval_read_begin: sleeps
 *   until no invalidation of the mm that
 *   was in progress at insert is left
 * SNAPSHOT: fingerprint the pages, kept
 *   only if !read_retry(seq) (ctx->lock)
 * return {slot, g << 1 | 1}
 *
 * An invalidation that started before the insert is not reported to the
 * new watch but has finished before WATCH returns, so what the caller
 * registers next is the new mapping; one that starts after the insert
 * clears the word, which the caller's re-check after registering sees.
 *
 * UNWATCH clears the word under ctx->lock first and only then removes the
 * notifier: an unmapping call that runs between the two finds the word
 * already clear, and none can return while the word still reads valid.
 *
 * REVALIDATE (ctx->mutex held), for a watch whose word a CLEAR cleared:
 * seq = read_begin; snapshot; under ctx->lock, if !read_retry(seq), the
 * watch saw only CLEARs and the fingerprint equals WATCH's: a new
 * generation g', word = g' << 1 | 1.  A registration made after WATCH,
 * whose re-check saw the word valid, pins exactly the pages WATCH
 * fingerprinted (any change in between cleared the word), and pinned pages
 * cannot be freed and reused, so equal fingerprints mean it still maps
 * what the range maps.  The snapshot also refuses a page not pinned for
 * DMA, which guards a caller that broke that protocol (mrmon_snapshot.c).
 */
#include <linux/mm.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include "mrmon.h"

static struct kmem_cache *mrmon_watch_cache;

/*
 * What one watch costs, for the per-user charge: the watch and the memory
 * cgroup's pointer for the slab object (136 bytes, as measured on 6.1);
 * its slot's entries in the slot table are charged by SETUP.
 */
#define MRMON_WATCH_CHARGE	(sizeof(struct mrmon_watch) + 8)

int mrmon_watch_cache_init(void)
{
	mrmon_watch_cache = KMEM_CACHE(mrmon_watch, SLAB_ACCOUNT);
	return mrmon_watch_cache ? 0 : -ENOMEM;
}

void mrmon_watch_cache_exit(void)
{
	kmem_cache_destroy(mrmon_watch_cache);
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
	if (!ctx->slot_watch || !ctx->free_slots)
		return -ENOMEM;
	for (i = 0; i < nslots; i++)
		ctx->free_slots[i] = nslots - 1 - i;
	ctx->nfree = nslots;
	return 0;
}

/* A failed SETUP, or a closing descriptor whose watches are all gone. */
void mrmon_slots_free(struct mrmon_ctx *ctx)
{
	kvfree(ctx->slot_watch);
	kvfree(ctx->free_slots);
	ctx->slot_watch = NULL;
	ctx->free_slots = NULL;
	ctx->nfree = 0;
}

static void mrmon_word_set(struct mrmon_ctx *ctx, u32 slot, u64 value)
{
	lockdep_assert_held(&ctx->lock);
	/* The hit path's acquire load of the word pairs with this. */
	smp_store_release(&ctx->words[slot], value);
}

/* Under ctx->mutex: a slot and the memory for a watch, or -errno. */
static struct mrmon_watch *mrmon_watch_alloc(struct mrmon_ctx *ctx)
{
	struct mrmon_watch *w;
	int ret;

	lockdep_assert_held(&ctx->mutex);
	ret = mrmon_mm_watch_add(ctx->mm_count);
	if (ret)
		return ERR_PTR(ret);
	ret = mrmon_charge(ctx, MRMON_WATCH_CHARGE);
	if (ret)
		goto uncount;
	ret = -ENOSPC;
	if (!ctx->nfree)
		goto uncharge;
	ret = -ENOMEM;
	w = kmem_cache_zalloc(mrmon_watch_cache, GFP_KERNEL_ACCOUNT);
	if (!w)
		goto uncharge;
	w->slot = ctx->free_slots[--ctx->nfree];
	ctx->slot_watch[w->slot] = w;
	w->ctx = ctx;
	return w;
uncharge:
	mrmon_uncharge(ctx, MRMON_WATCH_CHARGE);
uncount:
	mrmon_mm_watch_del(ctx->mm_count);
	return ERR_PTR(ret);
}

/* Under ctx->mutex; the notifier is not inserted (or was removed). */
static void mrmon_watch_free(struct mrmon_ctx *ctx, struct mrmon_watch *w)
{
	lockdep_assert_held(&ctx->mutex);
	ctx->slot_watch[w->slot] = NULL;
	ctx->free_slots[ctx->nfree++] = w->slot;
	kmem_cache_free(mrmon_watch_cache, w);
	mrmon_uncharge(ctx, MRMON_WATCH_CHARGE);
	mrmon_mm_watch_del(ctx->mm_count);
}

/* Under ctx->mutex: WATCH's fingerprint, kept only if nothing collided. */
static void mrmon_watch_snapshot(struct mrmon_watch *w, unsigned long seq)
{
	struct mrmon_ctx *ctx = w->ctx;
	u64 fp;

	lockdep_assert_held(&ctx->mutex);
	if (mrmon_snapshot(w, seq, false, &fp))
		return;
	spin_lock(&ctx->lock);
	if (!mmu_interval_read_retry(&w->sub, seq)) {
		w->fingerprint = fp;
		w->has_snapshot = true;
	}
	spin_unlock(&ctx->lock);
}

/**
 * mrmon_watch_one() - WATCH one range
 * @ctx: the descriptor, set up; ctx->mutex held; current->mm == ctx->mm
 * @r: the entry, copied from user space; slot and expected filled in
 *
 * Return: 0; -EINVAL for a bad entry; -ENOSPC with every slot in use;
 * -EDQUOT with max_watches_per_mm watches in the mm; -ENOMEM past the
 * memory charge; -EINTR if the first watch of the mm was
 * interrupted while the kernel set up its notifier list (try again).
 */
int mrmon_watch_one(struct mrmon_ctx *ctx, struct mrmon_range *r)
{
	unsigned long start, end, seq;
	struct mrmon_watch *w;
	int ret;

	lockdep_assert_held(&ctx->mutex);
	if ((r->flags & ~MRMON_RANGE_SNAPSHOT) || r->slot || r->expected ||
	    !r->len || r->start + r->len < r->start)
		return -EINVAL;
	start = r->start & PAGE_MASK;
	end = PAGE_ALIGN(r->start + r->len);
	/* The sum does not overflow, so only the rounding can wrap, to 0
	 * (for start 0, `end < r->start` would miss it).
	 */
	if (!end || end > TASK_SIZE)
		return -EINVAL;

	w = mrmon_watch_alloc(ctx);
	if (IS_ERR(w))
		return PTR_ERR(w);
	w->cookie = r->cookie;
	w->gen = ++ctx->next_gen;
	spin_lock(&ctx->lock);
	mrmon_word_set(ctx, w->slot, mrmon_word_of(w->gen));
	spin_unlock(&ctx->lock);

	ret = mmu_interval_notifier_insert(&w->sub, ctx->mm, start, end - start,
					   &mrmon_interval_ops);
	if (ret) {
		spin_lock(&ctx->lock);
		mrmon_word_set(ctx, w->slot, w->gen << 1);
		spin_unlock(&ctx->lock);
		mrmon_watch_free(ctx, w);
		return ret;
	}
	seq = mmu_interval_read_begin(&w->sub);
	if (r->flags & MRMON_RANGE_SNAPSHOT)
		mrmon_watch_snapshot(w, seq);
	r->slot = w->slot;
	r->expected = mrmon_word_of(w->gen);
	return 0;
}

/* Under ctx->mutex: the watch an UNWATCH or REVALIDATE entry names. */
static struct mrmon_watch *mrmon_watch_find(struct mrmon_ctx *ctx,
					    const struct mrmon_unwatch_entry *e)
{
	struct mrmon_watch *w;

	lockdep_assert_held(&ctx->mutex);
	if (e->flags || e->slot >= ctx->nslots)
		return ERR_PTR(-EINVAL);
	/* A user's index: no speculative load past the table either. */
	w = ctx->slot_watch[array_index_nospec(e->slot, ctx->nslots)];
	if (!w || w->gen != e->expected >> 1)
		return ERR_PTR(-ESTALE);
	return w;
}

/**
 * mrmon_unwatch_one() - UNWATCH one watch
 * @ctx: the descriptor, set up; ctx->mutex held
 * @e: slot and expected, as WATCH or REVALIDATE returned them
 *
 * Return: 0; -EINVAL for a bad entry; -ESTALE if the slot does not hold
 * that watch.
 */
int mrmon_unwatch_one(struct mrmon_ctx *ctx, const struct mrmon_unwatch_entry *e)
{
	struct mrmon_watch *w = mrmon_watch_find(ctx, e);

	if (IS_ERR(w))
		return PTR_ERR(w);
	/* Word first: see the top of the file. */
	spin_lock(&ctx->lock);
	mrmon_word_set(ctx, w->slot, w->gen << 1);
	spin_unlock(&ctx->lock);
	/* Waits for a callback running on this watch; none runs after. */
	mmu_interval_notifier_remove(&w->sub);
	mrmon_watch_free(ctx, w);
	return 0;
}

/**
 * mrmon_revalidate_one() - REVALIDATE one watch after a CLEAR
 * @ctx: the descriptor, set up; ctx->mutex held; current->mm == ctx->mm
 * @e: slot and expected; expected is rewritten: the new word, the same
 *     one if the word was never cleared, or 0 if it cannot be re-armed
 *
 * Return: 0 (whatever the outcome); -EINVAL for a bad entry; -ESTALE if
 * the slot does not hold that watch; -EINTR on a fatal signal.
 */
int mrmon_revalidate_one(struct mrmon_ctx *ctx, struct mrmon_unwatch_entry *e)
{
	struct mrmon_watch *w = mrmon_watch_find(ctx, e);
	unsigned long seq;
	u64 fp;
	int ret;

	if (IS_ERR(w))
		return PTR_ERR(w);
	if (READ_ONCE(ctx->words[w->slot]) == mrmon_word_of(w->gen)) {
		e->expected = mrmon_word_of(w->gen);
		return 0;
	}
	e->expected = 0;
	if (!w->has_snapshot || READ_ONCE(w->changed))
		return 0;
	seq = mmu_interval_read_begin(&w->sub);
	ret = mrmon_snapshot(w, seq, true, &fp);
	if (ret)
		return ret == -EINTR ? ret : 0;
	spin_lock(&ctx->lock);
	if (!mmu_interval_read_retry(&w->sub, seq) && !w->changed &&
	    fp == w->fingerprint) {
		w->gen = ++ctx->next_gen;
		mrmon_word_set(ctx, w->slot, mrmon_word_of(w->gen));
		WRITE_ONCE(ctx->hdr->revalidations, ctx->hdr->revalidations + 1);
		e->expected = mrmon_word_of(w->gen);
	}
	spin_unlock(&ctx->lock);
	return 0;
}

/* Under ctx->mutex: REVALIDATE's result could not reach the caller; go
 * back to the generation it knows, with the word clear.
 */
void mrmon_revalidate_undo(struct mrmon_ctx *ctx, u32 slot, u64 old_expected)
{
	struct mrmon_watch *w = ctx->slot_watch[slot];

	lockdep_assert_held(&ctx->mutex);
	spin_lock(&ctx->lock);
	w->gen = old_expected >> 1;
	mrmon_word_set(ctx, slot, w->gen << 1);
	WRITE_ONCE(ctx->hdr->revalidations, ctx->hdr->revalidations - 1);
	spin_unlock(&ctx->lock);
}

/* The descriptor is closing: no ioctl can run; remove every watch. */
void mrmon_watches_free(struct mrmon_ctx *ctx)
{
	struct mrmon_watch *w;
	u32 slot;

	mutex_lock(&ctx->mutex);
	for (slot = 0; slot < ctx->nslots; slot++) {
		w = ctx->slot_watch[slot];
		if (!w)
			continue;
		mmu_interval_notifier_remove(&w->sub);
		mrmon_watch_free(ctx, w);
	}
	mrmon_slots_free(ctx);
	mutex_unlock(&ctx->mutex);
}
