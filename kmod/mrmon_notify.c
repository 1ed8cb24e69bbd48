// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_notify.c - the invalidation callback and the event queue it feeds.
 *
 * The callback runs in whatever thread changes the page tables (the
 * munmap caller, khugepaged, kswapd), inside that change's
 * invalidate_range_start, before any page leaves the mapping.  It clears
 * the word there and then, so the unmapping call cannot return while the
 * word still looks valid:
 *
 *   munmap thread                     library thread (hit path)
 *   -------------                     -------------------------
 *   invalidate_range_start
 *     mrmon_invalidate
 *       spin_lock(ctx->lock)
 *       set the notifier's seq
 *       word &= ~1 (store-release)
 *       enqueue event
 *       spin_unlock
 *   zap page tables, free pages
 *   return to user                    load_acquire(word) != expected: miss
 *
 * Its work is a constant per watch the range overlaps: one leaf spinlock,
 * a few stores, one ring slot.  It never sleeps, allocates, or reads page
 * tables; it shares no lock with any path that takes mmap_lock.  How many
 * watches one range can overlap is bounded by the users' memory charge
 * (mrmon_charge.c).
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include "mrmon.h"

/*
 * The filter.  Skipping an event is safe only when the pages a pinned
 * registration holds stay mapped at the same addresses; docs/mrmon.md has
 * the table with the measurements.
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

/* Under ctx->lock. */
static void mrmon_event_push(struct mrmon_ctx *ctx, const struct mrmon_event *ev)
{
	lockdep_assert_held(&ctx->lock);
	if (ctx->ring_count == ctx->nevents) {
		ctx->overflow_unreported = true;
		WRITE_ONCE(ctx->hdr->overflows, ctx->hdr->overflows + 1);
	} else {
		u32 tail = (ctx->ring_head + ctx->ring_count) % ctx->nevents;

		ctx->ring[tail] = *ev;
		ctx->ring_count++;
	}
	mrmon_header_sync(ctx);
}

/* Under ctx->lock: clear the word if it still holds this watch. */
static bool mrmon_word_clear_locked(struct mrmon_watch *w, unsigned long start,
				    unsigned long end, u32 cause)
{
	struct mrmon_ctx *ctx = w->ctx;
	u64 valid = mrmon_word_of(w->gen);
	struct mrmon_event ev;

	lockdep_assert_held(&ctx->lock);
	if (READ_ONCE(ctx->words[w->slot]) != valid)
		return false;
	/* Publishes the clear; the hit path pairs it with an acquire load. */
	smp_store_release(&ctx->words[w->slot], valid & ~MRMON_WORD_VALID);
	WRITE_ONCE(ctx->hdr->invalidations, ctx->hdr->invalidations + 1);
	ev.cookie = w->cookie;
	ev.start = start;
	ev.end = end;
	ev.generation = w->gen;
	ev.slot = w->slot;
	ev.cause = cause;
	mrmon_event_push(ctx, &ev);
	return true;
}

/**
 * mrmon_invalidate() - the interval notifier's callback
 * @sub: the watch's notifier
 * @range: what is changing; may be far wider than the watch
 * @cur_seq: the sequence the collision protocol records
 *
 * Context: the invalidating thread's invalidate_range_start, blockable or
 * not (the OOM reaper); takes only ctx->lock.
 *
 * Return: true always: it never needs to sleep, so it never refuses a
 * non-blockable range.
 */
static bool mrmon_invalidate(struct mmu_interval_notifier *sub,
			     const struct mmu_notifier_range *range,
			     unsigned long cur_seq)
{
	struct mrmon_watch *w = container_of(sub, struct mrmon_watch, sub);
	struct mrmon_ctx *ctx = w->ctx;
	u32 cause = mrmon_cause_of(range->event);
	bool woke = false;

	spin_lock(&ctx->lock);
	/* Every event, even one that changes no PFN, fails a snapshot that
	 * overlaps it (mrmon_snapshot.c): one rule, no case to get wrong.
	 */
	mmu_interval_set_seq(sub, cur_seq);
	if (cause) {
		if (cause != MRMON_CAUSE_CLEAR)
			w->changed = true;
		woke = mrmon_word_clear_locked(w, max(range->start, mrmon_watch_start(w)),
					       min(range->end, mrmon_watch_end(w)), cause);
	}
	spin_unlock(&ctx->lock);
	if (woke)
		wake_up_interruptible(&ctx->wq);
	return true;
}

const struct mmu_interval_notifier_ops mrmon_interval_ops = {
	.invalidate = mrmon_invalidate,
};

bool mrmon_events_ready(struct mrmon_ctx *ctx)
{
	return READ_ONCE(ctx->hdr->pending) != 0;
}

/* Take the oldest event; an unreported overflow comes first. */
bool mrmon_event_pop(struct mrmon_ctx *ctx, struct mrmon_event *ev)
{
	bool got = true;

	spin_lock(&ctx->lock);
	if (ctx->overflow_unreported) {
		memset(ev, 0, sizeof(*ev));
		ev->slot = ~0u;
		ev->cause = MRMON_CAUSE_OVERFLOW;
		ctx->overflow_unreported = false;
	} else if (ctx->ring_count) {
		*ev = ctx->ring[ctx->ring_head];
		ctx->ring_head = (ctx->ring_head + 1) % ctx->nevents;
		ctx->ring_count--;
	} else {
		got = false;
	}
	mrmon_header_sync(ctx);
	spin_unlock(&ctx->lock);
	return got;
}

/* Events popped but not delivered (copy_to_user failed): user space must
 * rescan, so report an overflow instead of losing them silently.
 */
void mrmon_event_unpop_lost(struct mrmon_ctx *ctx)
{
	spin_lock(&ctx->lock);
	ctx->overflow_unreported = true;
	WRITE_ONCE(ctx->hdr->overflows, ctx->hdr->overflows + 1);
	mrmon_header_sync(ctx);
	spin_unlock(&ctx->lock);
}
