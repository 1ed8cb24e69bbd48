// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_snapshot.c - a fingerprint of the pages a watch maps, taken in
 * process context by the lockless fast page-table walk of GUP.
 *
 * A CLEAR is ambiguous: splitting a VMA or a huge page inside a 2 MiB
 * window sends CLEAR over the whole window to every watcher in it, though
 * their pages keep their PFNs (docs/mrmon.md, "Splits").  The notifier
 * invalidates at once for every CLEAR, as the kernel's contract requires;
 * REVALIDATE later re-arms a watch whose pages are still the ones WATCH
 * saw.  "The same pages" is decided by comparing two fingerprints, each a
 * keyed hash (siphash, a key drawn at load) of the PFN of every page of
 * the range, read by get_user_pages_fast_only() without faulting anything
 * in:
 *
 *   caller (ctx->mutex held)                  any thread changing the range
 *   ------------------------                  -----------------------------
 *   seq = mmu_interval_read_begin(sub)        invalidate_range_start:
 *   get_user_pages_fast_only, per chunk:        mrmon_invalidate takes
 *     the PFNs hashed, the pages put            ctx->lock, sets the seq,
 *     -EBUSY if the seq moved                   clears the word
 *   spin_lock(ctx->lock)                      (then the page tables change)
 *   mmu_interval_read_retry(sub, seq)?  -> the snapshot is not trusted
 *   ... publish (WATCH: the fingerprint; REVALIDATE: a new word)
 *   spin_unlock
 *
 * This is the collision protocol of the interval notifier (the users of
 * hmm_range_fault(), umem_odp) with the walk KVM pairs with its own
 * notifier sequence (hva_to_pfn_fast()): a mapped page is removed or
 * replaced only after the callback has moved the seq, so the PFNs read
 * between read_begin and a read_retry that finds the seq unmoved are the
 * ones mapped at the check.  Compared with hmm_range_fault() the walk
 * takes no mmap_lock, finds no VMA and runs no callbacks: 2.3 times
 * cheaper for a one-page watch in the guest (docs/benchmarks.md).  A page
 * not present or not readable (PROT_NONE, NUMA hinting), a special
 * mapping (PFNMAP, the zero page) or no mapping at all makes the snapshot
 * fail: such a watch is never re-armed.
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
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include "mrmon.h"

#define MRMON_SNAPSHOT_CHUNK	64	/* pages per fast walk (512 bytes of stack) */
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

/*
 * One chunk: get_user_pages_fast_only() reads the page tables without
 * mmap_lock and without faulting, and takes a reference on each page it
 * finds (so none is freed while it is hashed); it stops at the first page
 * that is not present, not readable or special (PFNMAP, the zero page).
 */
static int mrmon_snapshot_chunk(unsigned long start, int n, bool pinned, u64 *hash)
{
	struct page *pages[MRMON_SNAPSHOT_CHUNK];
	int i, got = get_user_pages_fast_only(start, n, 0, pages);
	int ret = got == n ? 0 : -ENOENT;

	for (i = 0; i < got; i++) {
		/*
		 * Only a hint, and only a safeguard: a caller that follows
		 * the protocol holds the pin itself.
		 */
		if (pinned && !folio_maybe_dma_pinned(page_folio(pages[i])))
			ret = -ENOENT;
		if (!ret)
			*hash = siphash_2u64(*hash, page_to_pfn(pages[i]), &mrmon_snapshot_key);
		put_page(pages[i]);
	}
	return ret;
}

/**
 * mrmon_snapshot() - fingerprint the pages mapped under a watch
 * @w: the watch; its notifier is inserted
 * @seq: from mmu_interval_read_begin(&w->sub), taken by the caller
 * @pinned: every page must be pinned for DMA (REVALIDATE's snapshot)
 * @fingerprint: out
 *
 * Context: process context in the watch's own mm (the fast walk reads
 * current->mm), ctx->mutex held; takes no mmap_lock.  The caller must
 * still check mmu_interval_read_retry(&w->sub, @seq) under ctx->lock
 * before it trusts the result.
 *
 * Return: 0; -EBUSY if an invalidation of the range began; -ENOENT if a
 * page is not present, cannot be read, or (@pinned) is not pinned; -E2BIG for a range over
 * MRMON_SNAPSHOT_MAX_PAGES; -EINTR on a fatal signal.
 */
int mrmon_snapshot(struct mrmon_watch *w, unsigned long seq, bool pinned, u64 *fingerprint)
{
	unsigned long addr, end = mrmon_watch_end(w), pages;
	u64 hash = 0;
	int ret = 0;

	lockdep_assert_held(&w->ctx->mutex);
	if ((end - mrmon_watch_start(w)) >> PAGE_SHIFT > MRMON_SNAPSHOT_MAX_PAGES)
		return -E2BIG;
	for (addr = mrmon_watch_start(w); addr < end && !ret; addr += pages << PAGE_SHIFT) {
		pages = min_t(unsigned long, (end - addr) >> PAGE_SHIFT, MRMON_SNAPSHOT_CHUNK);
		ret = mrmon_snapshot_chunk(addr, pages, pinned, &hash);
		/* A collision fails the snapshot anyway: stop early. */
		if (!ret && mmu_interval_check_retry(&w->sub, seq))
			ret = -EBUSY;
		if (!ret && fatal_signal_pending(current))
			ret = -EINTR;
		if (addr + (pages << PAGE_SHIFT) < end)
			cond_resched();
	}
	*fingerprint = hash;
	return ret;
}
