// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_pfn.c - decide an ambiguous CLEAR by the page tables.
 *
 * MMU_NOTIFY_CLEAR covers real changes (MADV_DONTNEED, COW, collapse) and
 * harmless ones: splitting a VMA or a huge page inside a 2 MiB window sends
 * CLEAR over the whole window to every watcher in it, though their pages
 * keep their PFNs (docs/mrmon.md, "Splits").  So a CLEAR is decided in two
 * steps, both before the unmapping call returns:
 *
 *   thread changing the mm                     ctx->lock held
 *   ----------------------                     --------------
 *   invalidate_range_start(range)
 *     mrmon_invalidate: CLEAR over slot   ->   first CLEAR in flight: record
 *                                              the PFN runs of the clip;
 *                                              remember `range` in the slot
 *   change the page tables
 *   invalidate_range_end(range)
 *     mrmon_hook_range_end                ->   for slots remembering `range`:
 *                                              walk again; PFNs differ or a
 *                                              page is gone: clear the word
 *   return to user
 *
 * Anything this cannot decide cheaply invalidates at once: a clip over
 * MRMON_PFN_MAX_PAGES, more than MRMON_PFN_RUNS discontiguous runs, a page
 * not present, a 1 GiB leaf, more than MRMON_CLEAR_INFLIGHT CLEARs at once,
 * a non-blockable range (the OOM reaper: its end may never come).
 *
 * The walk is lockless, like GUP-fast, with interrupts off.  It runs only
 * for a slot that is still valid, under ctx->lock.  Page tables under a
 * range are freed only after unmap_vmas sent UNMAP for it, and that UNMAP
 * must take ctx->lock to reach this slot, so it waits for the walk; a
 * collapse that frees a PTE table holds mmap_lock and the anon_vma lock for
 * writing, which excludes every other sender of a CLEAR over that window,
 * and the end-walk re-reads the PMD.
 *
 * range-end is only offered by a classic mmu_notifier, so each mm gets one
 * (mmu_notifier_get, shared by every context on that mm); its hook->lock
 * guards the list of contexts and is taken before ctx->lock.  Registering
 * one takes every lock of the mm (mm_take_all_locks), so the hook outlives
 * its contexts: the mm itself holds one reference, dropped by ->release
 * when the mm is torn down, and a later open on the same mm only counts a
 * reference.  The hook pins the module until it is freed.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pgtable.h>
#include <linux/slab.h>
#include "mrmon.h"

#define MRMON_PFN_MAX_PAGES	1024

bool mrmon_pfn_check = true;
module_param_named(pfn_check, mrmon_pfn_check, bool, 0644);
MODULE_PARM_DESC(pfn_check, "Decide CLEAR by comparing the watched PFNs (new descriptors)");

struct mrmon_mm_hook {
	struct mmu_notifier mn;
	spinlock_t lock;		/* guards ctxs; taken before ctx->lock */
	struct list_head ctxs;		/* mrmon_ctx.hook_node */
	bool mm_ref;			/* the mm's reference is taken (under
					   mmap_lock for writing) */
};

/* The PFN mapped at addr, or 0 for none or a mapping not decoded here. */
static unsigned long mrmon_pfn_at(struct mm_struct *mm, unsigned long addr)
{
	pgd_t pgd = READ_ONCE(*pgd_offset(mm, addr));
	p4d_t p4d;
	pud_t pud;
	pmd_t pmd;
	pte_t pte;

	if (pgd_none(pgd) || pgd_bad(pgd))
		return 0;
	p4d = READ_ONCE(*p4d_offset(&pgd, addr));
	if (p4d_none(p4d) || p4d_bad(p4d))
		return 0;
	pud = READ_ONCE(*pud_offset(&p4d, addr));
	if (pud_none(pud) || pud_leaf(pud) || pud_bad(pud))
		return 0;
	pmd = READ_ONCE(*pmd_offset(&pud, addr));
	if (pmd_none(pmd) || !pmd_present(pmd))
		return 0;
	if (pmd_leaf(pmd))
		return pmd_pfn(pmd) + ((addr & ~PMD_MASK) >> PAGE_SHIFT);
	pte = READ_ONCE(*pte_offset_kernel(&pmd, addr));
	return pte_present(pte) ? pte_pfn(pte) : 0;
}

/* PFN runs of [start, end); returns their number, or 0 if undecidable. */
static unsigned int mrmon_pfn_runs(struct mm_struct *mm, unsigned long start,
				   unsigned long end, struct mrmon_pfn_run *runs)
{
	unsigned long addr, pfn, flags;
	unsigned int n = 0;

	local_irq_save(flags);
	for (addr = start; addr < end; addr += PAGE_SIZE) {
		pfn = mrmon_pfn_at(mm, addr);
		if (!pfn) {
			n = 0;
			break;
		}
		if (n && runs[n - 1].pfn + runs[n - 1].npages == pfn) {
			runs[n - 1].npages++;
			continue;
		}
		if (n == MRMON_PFN_RUNS) {
			n = 0;
			break;
		}
		runs[n].addr = addr;
		runs[n].pfn = pfn;
		runs[n].npages = 1;
		n++;
	}
	local_irq_restore(flags);
	return n;
}

/* Called by the interval callback for a CLEAR; true: decided at the end. */
bool mrmon_pfn_clear_begin(struct mrmon_ctx *ctx, struct mrmon_slot *slot,
			   const struct mmu_notifier_range *range)
{
	unsigned long start = max(range->start, slot->start);
	unsigned long end = min(range->end, slot->end);
	u32 idx = slot - ctx->slots;
	bool deferred = false;

	if (!ctx->end_hook || !mmu_notifier_range_blockable(range) ||
	    (end - start) >> PAGE_SHIFT > MRMON_PFN_MAX_PAGES)
		return false;
	spin_lock(&ctx->lock);
	if (READ_ONCE(ctx->words[idx]) != (slot->gen << 1 | MRMON_WORD_VALID))
		goto out;
	if (!slot->clear_inflight) {
		slot->nruns = mrmon_pfn_runs(ctx->mm, start, end, slot->runs);
		if (!slot->nruns)
			goto out;
		slot->snap_start = start;
		slot->snap_end = end;
		list_add(&slot->suspect, &ctx->suspects);
	} else if (start < slot->snap_start || end > slot->snap_end ||
		   slot->clear_inflight == MRMON_CLEAR_INFLIGHT) {
		goto out;
	}
	slot->inflight[slot->clear_inflight++] = range;
	deferred = true;
out:
	spin_unlock(&ctx->lock);
	return deferred;
}

static bool mrmon_pfn_unchanged(struct mrmon_ctx *ctx, struct mrmon_slot *slot)
{
	struct mrmon_pfn_run now[MRMON_PFN_RUNS];
	unsigned int n = mrmon_pfn_runs(ctx->mm, slot->snap_start, slot->snap_end, now);

	return n == slot->nruns && !memcmp(now, slot->runs, n * sizeof(now[0]));
}

/* Under ctx->lock: `range` ended; true if a word was cleared. */
static bool mrmon_pfn_clear_end(struct mrmon_ctx *ctx,
				const struct mmu_notifier_range *range)
{
	struct mrmon_slot *slot, *tmp;
	bool woke = false;
	unsigned int i;

	list_for_each_entry_safe(slot, tmp, &ctx->suspects, suspect) {
		for (i = 0; i < slot->clear_inflight; i++)
			if (slot->inflight[i] == range)
				break;
		if (i == slot->clear_inflight)
			continue;
		slot->inflight[i] = slot->inflight[--slot->clear_inflight];
		if (!mrmon_pfn_unchanged(ctx, slot)) {
			woke |= mrmon_word_clear_locked(ctx, slot, slot->snap_start,
							slot->snap_end,
							MRMON_CAUSE_CLEAR);
			mrmon_slot_suspect_drop(slot);
		} else if (!slot->clear_inflight) {
			list_del_init(&slot->suspect);
		}
	}
	return woke;
}

static void mrmon_hook_range_end(struct mmu_notifier *mn,
				 const struct mmu_notifier_range *range)
{
	struct mrmon_mm_hook *hook = container_of(mn, struct mrmon_mm_hook, mn);
	struct mrmon_ctx *ctx;
	bool woke;

	if (range->event != MMU_NOTIFY_CLEAR)
		return;
	spin_lock(&hook->lock);
	list_for_each_entry(ctx, &hook->ctxs, hook_node) {
		spin_lock(&ctx->lock);
		woke = !list_empty(&ctx->suspects) && mrmon_pfn_clear_end(ctx, range);
		spin_unlock(&ctx->lock);
		if (woke)
			wake_up_interruptible(&ctx->wq);
	}
	spin_unlock(&hook->lock);
}

static struct mmu_notifier *mrmon_hook_alloc(struct mm_struct *mm)
{
	struct mrmon_mm_hook *hook = kzalloc(sizeof(*hook), GFP_KERNEL_ACCOUNT);

	if (!hook)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&hook->lock);
	INIT_LIST_HEAD(&hook->ctxs);
	return &hook->mn;
}

static void mrmon_hook_free(struct mmu_notifier *mn)
{
	kfree(container_of(mn, struct mrmon_mm_hook, mn));
	module_put(THIS_MODULE);
}

/* The mm is going away: drop its own reference (see the top). */
static void mrmon_hook_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	mmu_notifier_put(mn);
}

static const struct mmu_notifier_ops mrmon_hook_ops = {
	.release = mrmon_hook_release,
	.invalidate_range_end = mrmon_hook_range_end,
	.alloc_notifier = mrmon_hook_alloc,
	.free_notifier = mrmon_hook_free,
};

/* SETUP, ctx->mutex held, current->mm == ctx->mm. */
int mrmon_pfn_hook_add(struct mrmon_ctx *ctx)
{
	struct mmu_notifier *mn;
	struct mrmon_mm_hook *hook;

	if (!mrmon_pfn_check)
		return 0;
	mmap_write_lock(ctx->mm);
	mn = mmu_notifier_get_locked(&mrmon_hook_ops, ctx->mm);
	hook = IS_ERR(mn) ? NULL : container_of(mn, struct mrmon_mm_hook, mn);
	if (hook && !hook->mm_ref) {
		mmu_notifier_get_locked(&mrmon_hook_ops, ctx->mm);
		__module_get(THIS_MODULE);
		hook->mm_ref = true;
	}
	mmap_write_unlock(ctx->mm);
	if (!hook)
		return PTR_ERR(mn);
	spin_lock(&hook->lock);
	list_add(&ctx->hook_node, &hook->ctxs);
	spin_unlock(&hook->lock);
	ctx->end_hook = hook;
	return 0;
}

/* No notifier of this context can still be inserted. */
void mrmon_pfn_hook_del(struct mrmon_ctx *ctx)
{
	struct mrmon_mm_hook *hook = ctx->end_hook;

	if (!hook)
		return;
	spin_lock(&hook->lock);
	list_del(&ctx->hook_node);
	spin_unlock(&hook->lock);
	ctx->end_hook = NULL;
	mmu_notifier_put(&hook->mn);
}

/* Module exit: wait for hooks still being freed after a grace period. */
void mrmon_pfn_exit(void)
{
	mmu_notifier_synchronize();
}
