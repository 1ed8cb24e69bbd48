// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_notify.c - the invalidation callback, its event filter, and the
 * event queue it feeds.
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
 *       word &= ~1 (store-release)
 *       enqueue event
 *       spin_unlock
 *   zap page tables, free pages
 *   return to user                    load_acquire(word) != expected: miss
 *
 * It takes only ctx->lock (a leaf spinlock) and wakes readers; it never
 * sleeps, never allocates (the ring is allocated by SETUP) and shares no
 * lock with any path that takes mmap_lock.
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
	WRITE_ONCE(ctx->hdr->pending,
		   ctx->ring_count + (ctx->overflow_unreported ? 1 : 0));
}

/* Under ctx->lock. */
static void mrmon_event_push(struct mrmon_ctx *ctx, const struct mrmon_event *ev)
{
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
bool mrmon_word_clear_locked(struct mrmon_ctx *ctx,
				    struct mrmon_slot *slot,
				    unsigned long start, unsigned long end,
				    u32 cause)
{
	u32 idx = slot - ctx->slots;
	u64 valid = slot->gen << 1 | MRMON_WORD_VALID;
	struct mrmon_event ev;

	if (READ_ONCE(ctx->words[idx]) != valid)
		return false;
	/* Orders the callers' earlier stores (none that user space reads
	 * before the word) and publishes the clear; the hit path pairs it
	 * with an acquire load. */
	smp_store_release(&ctx->words[idx], valid & ~MRMON_WORD_VALID);
	WRITE_ONCE(ctx->hdr->invalidations, ctx->hdr->invalidations + 1);
	ev.cookie = slot->cookie;
	ev.start = start;
	ev.end = end;
	ev.generation = slot->gen;
	ev.slot = idx;
	ev.cause = cause;
	mrmon_event_push(ctx, &ev);
	return true;
}

/* Under ctx->lock: forget the CLEARs in flight (the word is invalid). */
void mrmon_slot_suspect_drop(struct mrmon_slot *slot)
{
	slot->clear_inflight = 0;
	list_del_init(&slot->suspect);
}

void mrmon_slot_invalidate(struct mrmon_ctx *ctx, struct mrmon_slot *slot,
			   unsigned long start, unsigned long end, u32 cause)
{
	bool woke;

	spin_lock(&ctx->lock);
	woke = mrmon_word_clear_locked(ctx, slot, start, end, cause);
	if (woke)
		mrmon_slot_suspect_drop(slot);
	spin_unlock(&ctx->lock);
	if (woke)
		wake_up_interruptible(&ctx->wq);
}

static bool mrmon_invalidate(struct mmu_interval_notifier *sub,
			     const struct mmu_notifier_range *range,
			     unsigned long cur_seq)
{
	struct mrmon_slot *slot = container_of(sub, struct mrmon_slot, sub);
	struct mrmon_ctx *ctx = slot->ctx;
	unsigned long start = max(range->start, slot->start);
	unsigned long end = min(range->end, slot->end);
	u32 cause = mrmon_cause_of(range->event);

	spin_lock(&ctx->lock);
	mmu_interval_set_seq(sub, cur_seq);
	spin_unlock(&ctx->lock);
	if (!cause)
		return true;
	/* A CLEAR that may leave the PFNs alone (a huge-page or VMA split
	 * of the 2 MiB window) is decided when it ends, still before the
	 * unmapping call returns (mrmon_pfn.c). */
	if (cause == MRMON_CAUSE_CLEAR && mrmon_pfn_clear_begin(ctx, slot, range))
		return true;
	mrmon_slot_invalidate(ctx, slot, start, end, cause);
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
		ev->slot = MRMON_SLOT_NONE;
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
 * rescan, so report an overflow instead of losing them silently. */
void mrmon_event_unpop_lost(struct mrmon_ctx *ctx)
{
	spin_lock(&ctx->lock);
	ctx->overflow_unreported = true;
	WRITE_ONCE(ctx->hdr->overflows, ctx->hdr->overflows + 1);
	mrmon_header_sync(ctx);
	spin_unlock(&ctx->lock);
}
