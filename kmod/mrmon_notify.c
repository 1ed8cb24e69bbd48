// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_notify.c - the descriptor's mmu_notifier and the event queue it
 * feeds.
 *
 * The callbacks run in whatever thread changes the page tables (the
 * munmap caller, khugepaged, kswapd, the OOM reaper), inside that
 * change's invalidate_range_start, before any page leaves the mapping.
 * They clear the words there and then, so the unmapping call cannot
 * return while a word still looks valid:
 *
 *   munmap thread                     library thread (hit path)
 *   -------------                     -------------------------
 *   invalidate_range_start
 *     mrmon_mn_start
 *       filter the event (O(1))
 *       spin_lock(ctx->lock)
 *       active++, widen the range
 *       mrmon_watches_clear: per overlapping watch,
 *         word &= ~1 (store-release), enqueue, unlink (kept for reuse)
 *       spin_unlock
 *   zap page tables, free pages
 *   invalidate_range_end
 *     mrmon_mn_end: active--
 *   return to user                    load_acquire(word) != expected: miss
 *
 * Work per call: O(1) for a filtered event; otherwise one leaf spinlock,
 * an interval-tree descent O(log n) and a constant per watch it clears,
 * each watch at most once in its life.  Never sleeps, allocates or reads
 * page tables, so a non-blockable range (the OOM reaper) is never refused.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include "mrmon.h"

/*
 * The filter, decided from the event alone before any lock or tree walk.
 * Skipping an event is safe only when the pages a pinned registration
 * holds stay mapped at the same addresses (docs/mrmon.md, "The filter").
 */
static u32 mrmon_cause_of(enum mmu_notifier_event event)
{
	switch (event) {
	case MMU_NOTIFY_UNMAP:
		return MRMON_CAUSE_UNMAP;
	case MMU_NOTIFY_CLEAR:
		return MRMON_CAUSE_CLEAR;
	case MMU_NOTIFY_RELEASE:
		return MRMON_CAUSE_RELEASE;
	case MMU_NOTIFY_MIGRATE:
		return MRMON_CAUSE_MIGRATE;
	case MMU_NOTIFY_EXCLUSIVE:
		return MRMON_CAUSE_EXCLUSIVE;
	/*
	 * Permission-only changes: mprotect (PROTECTION_VMA), fork's
	 * write-protection of the parent for copy-on-write and page_mkclean
	 * (PROTECTION_PAGE), clear_refs (SOFT_DIRTY).  The PTEs keep their
	 * PFNs.  A pinned anonymous page is copied for the child at fork
	 * time, so the parent never breaks COW on it; an unpinned page that
	 * is later copied on write produces a CLEAR, which invalidates.
	 */
	case MMU_NOTIFY_PROTECTION_VMA:
	case MMU_NOTIFY_PROTECTION_PAGE:
	case MMU_NOTIFY_SOFT_DIRTY:
		return 0;
	default:
		/* An event type newer than this module: assume the worst. */
		return MRMON_CAUSE_OTHER;
	}
}

static void mrmon_header_sync(struct mrmon_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	WRITE_ONCE(ctx->hdr->pending,
		   ctx->ring_count + (ctx->overflow_unreported ? 1 : 0));
}

/**
 * mrmon_event_push() - queue an event
 * @ctx: the descriptor; ctx->lock held
 * @ev: the event
 *
 * Return: true if queued; false if the queue was full (an overflow is
 * reported instead, and the caller parks the slot in limbo).
 */
bool mrmon_event_push(struct mrmon_ctx *ctx, const struct mrmon_event *ev)
{
	bool queued = ctx->ring_count < ctx->nevents;

	lockdep_assert_held(&ctx->lock);
	if (!queued) {
		ctx->overflow_unreported = true;
		WRITE_ONCE(ctx->hdr->overflows, ctx->hdr->overflows + 1);
	} else {
		u32 tail = (ctx->ring_head + ctx->ring_count) % ctx->nevents;

		ctx->ring[tail] = *ev;
		ctx->ring_count++;
	}
	mrmon_header_sync(ctx);
	return queued;
}

/* Under ctx->lock: an invalidation of [start, end) is in flight. */
static void mrmon_active_add(struct mrmon_ctx *ctx, unsigned long start,
			     unsigned long end)
{
	lockdep_assert_held(&ctx->lock);
	if (!ctx->active++) {
		ctx->active_start = start;
		ctx->active_end = end;
	} else {
		ctx->active_start = min(ctx->active_start, start);
		ctx->active_end = max(ctx->active_end, end);
	}
}

/**
 * mrmon_mn_start() - invalidate_range_start of the descriptor's notifier
 * @mn: ctx->mn
 * @range: what is changing; may be far wider than any watch
 *
 * Context: the invalidating thread, blockable or not; takes only
 * ctx->lock.
 *
 * Return: 0 always: it never needs to sleep.
 */
static int mrmon_mn_start(struct mmu_notifier *mn,
			  const struct mmu_notifier_range *range)
{
	struct mrmon_ctx *ctx = container_of(mn, struct mrmon_ctx, mn);
	u32 cause = mrmon_cause_of(range->event);
	unsigned int cleared;

	if (!cause)
		return 0;
	spin_lock(&ctx->lock);
	if (ctx->dead) {
		spin_unlock(&ctx->lock);
		return 0;
	}
	mrmon_active_add(ctx, range->start, range->end);
	cleared = mrmon_watches_clear(ctx, range->start, range->end, cause);
	spin_unlock(&ctx->lock);
	if (cleared)
		wake_up_interruptible(&ctx->wq);
	return 0;
}

/**
 * mrmon_mn_end() - invalidate_range_end: the change is done
 * @mn: ctx->mn
 * @range: as given to mrmon_mn_start(), with the same event
 *
 * The same filter as the start, so only counted starts are counted out.
 * An end whose start ran before SETUP registered the notifier cannot
 * happen (registration excludes invalidations in flight with
 * mm_take_all_locks() and the mmap_lock); the count is not decremented
 * past zero all the same.
 */
static void mrmon_mn_end(struct mmu_notifier *mn,
			 const struct mmu_notifier_range *range)
{
	struct mrmon_ctx *ctx = container_of(mn, struct mrmon_ctx, mn);

	if (!mrmon_cause_of(range->event))
		return;
	spin_lock(&ctx->lock);
	if (ctx->active)
		ctx->active--;
	spin_unlock(&ctx->lock);
}

/*
 * The address space is torn down (exit_mmap): every watch goes, cause
 * RELEASE.  The notifier is unhooked after this; no invalidation follows.
 */
static void mrmon_mn_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct mrmon_ctx *ctx = container_of(mn, struct mrmon_ctx, mn);
	unsigned int cleared = 0;

	spin_lock(&ctx->lock);
	if (!ctx->dead)
		cleared = mrmon_watches_clear(ctx, 0, ULONG_MAX, MRMON_CAUSE_RELEASE);
	spin_unlock(&ctx->lock);
	if (cleared)
		wake_up_interruptible(&ctx->wq);
}

/* After the last reference and an SRCU grace period (mmu_notifier_put). */
static void mrmon_mn_free(struct mmu_notifier *mn)
{
	mrmon_ctx_free(container_of(mn, struct mrmon_ctx, mn));
}

const struct mmu_notifier_ops mrmon_mn_ops = {
	.release = mrmon_mn_release,
	.invalidate_range_start = mrmon_mn_start,
	.invalidate_range_end = mrmon_mn_end,
	.free_notifier = mrmon_mn_free,
};

bool mrmon_events_ready(struct mrmon_ctx *ctx)
{
	return READ_ONCE(ctx->hdr->pending) != 0;
}

/**
 * mrmon_events_take() - take queued events for read(), one lock for all
 * @ctx: the descriptor; no lock held
 * @ev: where they go
 * @max: how many at most; at least 1
 * @take: filled in, for mrmon_events_done()
 *
 * An unreported overflow comes first, as an OVERFLOW event standing for
 * the slots in limbo at this instant that no other OVERFLOW in flight
 * stands for (ctx->limbo_held counts those, the oldest in the queue).
 * The slots the events name are not given back here: user space has not
 * been told yet.
 *
 * Return: how many events were taken.
 */
u32 mrmon_events_take(struct mrmon_ctx *ctx, struct mrmon_event *ev, u32 max,
		      struct mrmon_take *take)
{
	u32 n = 0, first;

	take->overflow = false;
	take->nlimbo = 0;
	spin_lock(&ctx->lock);
	if (ctx->overflow_unreported) {
		memset(ev, 0, sizeof(*ev));
		ev->slot = ~0u;
		ev->cause = MRMON_CAUSE_OVERFLOW;
		ctx->overflow_unreported = false;
		take->overflow = true;
		take->nlimbo = ctx->nlimbo - ctx->limbo_held;
		ctx->limbo_held = ctx->nlimbo;
		n = 1;
	}
	while (n < max && ctx->ring_count) {
		first = min3(max - n, ctx->ring_count, ctx->nevents - ctx->ring_head);
		memcpy(ev + n, ctx->ring + ctx->ring_head, first * sizeof(*ev));
		ctx->ring_head = (ctx->ring_head + first) % ctx->nevents;
		ctx->ring_count -= first;
		n += first;
	}
	if (n)
		mrmon_header_sync(ctx);
	spin_unlock(&ctx->lock);
	take->n = n;
	return n;
}

/**
 * mrmon_events_done() - the events taken reached user space, or not
 * @ctx: the descriptor; no lock held
 * @ev: as filled by mrmon_events_take()
 * @take: as filled by mrmon_events_take()
 * @delivered: copied to user space
 *
 * Delivered: each event's slot goes back to the free stack, and so do as
 * many limbo slots as the OVERFLOW event stood for, from the head of the
 * queue: the oldest, all lost before it was taken (with two OVERFLOW
 * events in flight in two reads, either may give back the older slots
 * first; both were taken after those slots were lost).  Slots lost later
 * wait for the next OVERFLOW.  Not delivered (the copy faulted): user
 * space must rescan, so an overflow is reported again, the events' slots
 * wait in limbo for it and the OVERFLOW's stop being held.  Either way a
 * slot is reused only after user space has been told its watch is gone.
 * One lock for all.
 */
void mrmon_events_done(struct mrmon_ctx *ctx, const struct mrmon_event *ev,
		       const struct mrmon_take *take, bool delivered)
{
	u32 i = take->overflow ? 1 : 0;

	spin_lock(&ctx->lock);
	if (!delivered) {
		for (; i < take->n; i++)
			mrmon_limbo_push(ctx, ev[i].slot);
		ctx->limbo_held -= take->nlimbo;
		ctx->overflow_unreported = true;
		WRITE_ONCE(ctx->hdr->overflows, ctx->hdr->overflows + 1);
		mrmon_header_sync(ctx);
		spin_unlock(&ctx->lock);
		return;
	}
	if (take->overflow) {
		u32 k;

		for (k = 0; k < take->nlimbo; k++) {
			mrmon_slot_put(ctx, ctx->limbo[ctx->limbo_head]);
			ctx->limbo_head = (ctx->limbo_head + 1) % ctx->nslots;
		}
		ctx->nlimbo -= take->nlimbo;
		ctx->limbo_held -= take->nlimbo;
	}
	for (; i < take->n; i++)
		mrmon_slot_put(ctx, ev[i].slot);
	spin_unlock(&ctx->lock);
}
