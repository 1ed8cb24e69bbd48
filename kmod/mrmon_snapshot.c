// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_snapshot.c - a fingerprint of the pages a watch maps, taken in
 * process context with the kernel's HMM snapshot API.
 *
 * A CLEAR is ambiguous: splitting a VMA or a huge page inside a 2 MiB
 * window sends CLEAR over the whole window to every watcher in it, though
 * their pages keep their PFNs (docs/mrmon.md, "Splits").  The notifier
 * invalidates at once for every CLEAR, as the kernel's contract requires;
 * REVALIDATE later re-arms a watch whose pages are still the ones WATCH
 * saw.  "The same pages" is decided by comparing two fingerprints, each a
 * keyed hash (siphash, a key drawn at load) of the PFN of every page of
 * the range, taken by hmm_range_fault() without faulting anything in:
 *
 *   caller (ctx->mutex held)                  any thread changing the range
 *   ------------------------                  -----------------------------
 *   seq = mmu_interval_read_begin(sub)        invalidate_range_start:
 *   mmap_read_lock                              mrmon_invalidate takes
 *   hmm_range_fault(notifier_seq = seq)         ctx->lock, sets the seq,
 *     -EBUSY if an invalidation began           clears the word
 *   mmap_read_unlock
 *   spin_lock(ctx->lock)
 *   mmu_interval_read_retry(sub, seq)?  -> the snapshot is not trusted
 *   ... publish (WATCH: the fingerprint; REVALIDATE: a new word)
 *   spin_unlock
 *
 * This is the collision protocol hmm_range_fault()'s users and umem_odp
 * follow, with ctx->lock as the lock both sides take.  A page not present,
 * or a range the walk cannot read (PROT_NONE, VM_IO, no VMA), makes the
 * snapshot fail: such a watch is never re-armed.
 *
 * Equal PFNs mean the same memory only while nobody can free and reuse
 * the pages in between, which a pin guarantees: the registration a watch
 * protects pins them (ibv_reg_mr, io_uring fixed buffers).  So the
 * snapshot REVALIDATE takes also requires every page to be pinned for DMA
 * (folio_maybe_dma_pinned()).  An unpinned page freed by MADV_DONTNEED is
 * often the very page the next fault gets back; and a caller that broke
 * the protocol (registered after a CLEAR, ignored its re-check) may find
 * an unpinned page it once fingerprinted back under the address.  Neither
 * is re-armed.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include "mrmon.h"

#define MRMON_SNAPSHOT_CHUNK	64	/* PFNs per hmm_range_fault() call */
/* Beyond this a watch gets no snapshot (its CLEARs re-register). */
#define MRMON_SNAPSHOT_MAX_PAGES BIT(20)

static siphash_key_t mrmon_snapshot_key;

/* Module load: a key user space cannot learn, so it cannot aim at a
 * collision of two page lists.
 */
void mrmon_snapshot_key_init(void)
{
	get_random_bytes(&mrmon_snapshot_key, sizeof(mrmon_snapshot_key));
}

static int mrmon_snapshot_chunk(struct hmm_range *range, bool pinned, u64 *hash)
{
	unsigned long i, n = (range->end - range->start) >> PAGE_SHIFT;
	int ret = hmm_range_fault(range);

	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		unsigned long e = range->hmm_pfns[i];
		struct page *page;

		if (!(e & HMM_PFN_VALID) || (e & HMM_PFN_ERROR))
			return -ENOENT;
		page = hmm_pfn_to_page(e);
		/*
		 * Only a hint without a reference, and only a safeguard: a
		 * caller that follows the protocol holds the pin itself.
		 */
		if (pinned && !folio_maybe_dma_pinned(page_folio(page)))
			return -ENOENT;
		*hash = siphash_2u64(*hash, page_to_pfn(page), &mrmon_snapshot_key);
	}
	return 0;
}

/**
 * mrmon_snapshot() - fingerprint the pages mapped under a watch
 * @w: the watch; its notifier is inserted
 * @seq: from mmu_interval_read_begin(&w->sub), taken by the caller
 * @pinned: every page must be pinned for DMA (REVALIDATE's snapshot)
 * @fingerprint: out
 *
 * Context: process context in the watch's own mm, ctx->mutex held, no
 * mmap_lock held; takes mmap_lock for reading.  The caller must still
 * check mmu_interval_read_retry(&w->sub, @seq) under ctx->lock before it
 * trusts the result.
 *
 * Return: 0; -EBUSY if an invalidation of the range began; -ENOENT if a
 * page is not present, cannot be read, or (@pinned) is not pinned; -E2BIG for a range over
 * MRMON_SNAPSHOT_MAX_PAGES; -EINTR on a fatal signal.
 */
int mrmon_snapshot(struct mrmon_watch *w, unsigned long seq, bool pinned, u64 *fingerprint)
{
	unsigned long pfns[MRMON_SNAPSHOT_CHUNK];
	unsigned long addr, end = mrmon_watch_end(w);
	struct hmm_range range = {
		.notifier = &w->sub,
		.notifier_seq = seq,
		.hmm_pfns = pfns,
		.default_flags = 0,	/* look, never fault */
		.pfn_flags_mask = 0,
	};
	u64 hash = 0;
	int ret = 0;

	lockdep_assert_held(&w->ctx->mutex);
	if ((end - mrmon_watch_start(w)) >> PAGE_SHIFT > MRMON_SNAPSHOT_MAX_PAGES)
		return -E2BIG;
	if (mmap_read_lock_killable(w->ctx->mm))
		return -EINTR;
	for (addr = mrmon_watch_start(w); addr < end && !ret; addr = range.end) {
		range.start = addr;
		range.end = min(end, addr + MRMON_SNAPSHOT_CHUNK * PAGE_SIZE);
		ret = mrmon_snapshot_chunk(&range, pinned, &hash);
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
		cond_resched();
	}
	mmap_read_unlock(w->ctx->mm);
	*fingerprint = hash;
	return ret;
}
