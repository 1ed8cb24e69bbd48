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
 *       record the range in flight
 *       mrmon_watches_clear: per overlapping watch,
 *         word &= ~1 (store-release), enqueue, unlink (kept for reuse)
 *       spin_unlock
 *   zap page tables, free pages
 *   invalidate_range_end
 *     mrmon_mn_end: remove the range
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
	if (ctx->ninflight < MRMON_INFLIGHT) {
		ctx->inflight[ctx->ninflight++] = (struct mrmon_span){ start, end };
	} else if (!ctx->wide++) {
		ctx->wide_start = start;
		ctx->wide_end = end;
	} else {
		ctx->wide_start = min(ctx->wide_start, start);
		ctx->wide_end = max(ctx->wide_end, end);
	}
}

/*
 * Under ctx->lock: the invalidation of [start, end) is done.  Its entry is
 * any one with the same range: two in flight with one range are
 * interchangeable, and one counted in the union is covered by it as long
 * as the union's count is not 0.
 */
static void mrmon_active_remove(struct mrmon_ctx *ctx, unsigned long start,
				unsigned long end)
{
	unsigned int i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < ctx->ninflight; i++) {
		if (ctx->inflight[i].start == start && ctx->inflight[i].end == end) {
			ctx->inflight[i] = ctx->inflight[--ctx->ninflight];
			return;
		}
	}
	if (ctx->wide)
		ctx->wide--;
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
 * mm_take_all_locks() and the mmap_lock); the union's count is not
 * decremented past zero all the same.
 */
static void mrmon_mn_end(struct mmu_notifier *mn,
			 const struct mmu_notifier_range *range)
{
	struct mrmon_ctx *ctx = container_of(mn, struct mrmon_ctx, mn);

	if (!mrmon_cause_of(range->event))
		return;
	spin_lock(&ctx->lock);
	mrmon_active_remove(ctx, range->start, range->end);
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

/* Under ctx->lock: the n events at the ring's head reached user space;
 * their slots go back on the free stack and the head moves past them.
 */
static void mrmon_ring_consume(struct mrmon_ctx *ctx, u32 n)
{
	u32 i;

	lockdep_assert_held(&ctx->lock);
	for (i = 0; i < n; i++)
		mrmon_slot_put(ctx, ctx->ring[(ctx->ring_head + i) % ctx->nevents].slot);
	ctx->ring_head = (ctx->ring_head + n) % ctx->nevents;
	ctx->ring_count -= n;
	mrmon_header_sync(ctx);
}

/* Under ctx->lock: the OVERFLOW event standing for the oldest n slots in
 * limbo reached user space; they go back on the free stack.
 */
static void mrmon_limbo_release(struct mrmon_ctx *ctx, u32 n)
{
	lockdep_assert_held(&ctx->lock);
	ctx->nlimbo -= n;
	while (n--) {
		mrmon_slot_put(ctx, ctx->limbo[ctx->limbo_head]);
		ctx->limbo_head = (ctx->limbo_head + 1) % ctx->nslots;
	}
}

/* Copy the OVERFLOW event out, then give back the slots it stands for:
 * those in limbo when it was taken (later ones wait for the next).
 * Return: 1, 0 (no overflow to report) or -EFAULT (reported again).
 */
static long mrmon_overflow_copy(struct mrmon_ctx *ctx, struct mrmon_event __user *buf)
{
	static const struct mrmon_event overflow = {
		.slot = ~0u,
		.cause = MRMON_CAUSE_OVERFLOW,
	};
	bool copied;
	u32 nlimbo;

	spin_lock(&ctx->lock);
	if (!ctx->overflow_unreported) {
		spin_unlock(&ctx->lock);
		return 0;
	}
	ctx->overflow_unreported = false;
	nlimbo = ctx->nlimbo;
	spin_unlock(&ctx->lock);
	copied = !copy_to_user(buf, &overflow, sizeof(overflow));
	spin_lock(&ctx->lock);
	if (copied)
		mrmon_limbo_release(ctx, nlimbo);
	else
		ctx->overflow_unreported = true;
	mrmon_header_sync(ctx);
	spin_unlock(&ctx->lock);
	return copied ? 1 : -EFAULT;
}

/**
 * mrmon_events_copy() - copy queued events to user space, from the ring
 * @ctx: the descriptor; ctx->read_mutex held, ctx->lock not
 * @buf: the user's buffer
 * @max: how many events it holds; at least 1
 *
 * An unreported overflow comes first, as an OVERFLOW event.  Then the
 * queued events are copied straight from the ring, a contiguous piece at
 * a time, with no spinlock held: the pieces stay counted in ring_count
 * while they are copied, so an invalidation, which writes only past
 * ring_count, cannot overwrite them, and only a reader moves ring_head,
 * one at a time (read_mutex).  Once a piece is out, under ctx->lock, the
 * head moves past it and the slots its events name go back on the free
 * stack: a slot is reused only after user space has been told its watch
 * is gone.  A copy that faults leaves the events it did not copy queued,
 * for the next read(): nothing is lost.  One lock round trip per piece
 * (at most two per read: the ring wraps once) and one copy per event.
 *
 * Return: the events copied (0: none queued); -EFAULT if not even the
 * first could be.
 */
long mrmon_events_copy(struct mrmon_ctx *ctx, struct mrmon_event __user *buf, u32 max)
{
	unsigned long left;
	u32 head, n;
	long done;

	lockdep_assert_held(&ctx->read_mutex);
	done = mrmon_overflow_copy(ctx, buf);
	if (done < 0)
		return done;
	spin_lock(&ctx->lock);
	for (;;) {
		head = ctx->ring_head;
		n = min3(max - (u32)done, ctx->ring_count, ctx->nevents - head);
		spin_unlock(&ctx->lock);
		if (!n)
			return done;
		left = copy_to_user(buf + done, ctx->ring + head, n * sizeof(*buf));
		n -= DIV_ROUND_UP(left, sizeof(*buf));
		done += n;
		spin_lock(&ctx->lock);
		if (n)
			mrmon_ring_consume(ctx, n);
		if (left) {
			spin_unlock(&ctx->lock);
			return done ? done : -EFAULT;
		}
	}
}
