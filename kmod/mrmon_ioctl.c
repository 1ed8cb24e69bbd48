// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_ioctl.c - HANDSHAKE, SETUP, WATCH, UNWATCH, and freeing a context.
 *
 * WATCH, per range:
 *
 *   WATCH (ctx->mutex held)                  any thread changing the range
 *   -----------------------                  -----------------------------
 *   take a free slot, new generation g
 *   word = g << 1 | 1   (under ctx->lock)
 *   mmu_interval_notifier_insert             invalidate_range_start:
 *                                              callback clears the word
 *   mmu_interval_read_begin: sleeps until
 *     no invalidation of the mm that was
 *     in progress at insert time is left
 *   return {slot, g << 1 | 1}
 *
 * An invalidation that started before the insert is not reported to the
 * new slot (it is not in the tree yet) but has finished before WATCH
 * returns, so what the caller registers next is the new mapping; one that
 * starts after the insert clears the word, which the caller's re-check
 * after registering sees.
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mrmon.h"

static bool mrmon_zero(const u64 *v, unsigned int n)
{
	while (n--)
		if (v[n])
			return false;
	return true;
}

static long mrmon_handshake(struct mrmon_ctx *ctx, void __user *uarg)
{
	struct mrmon_handshake hs;
	long ret = 0;

	if (copy_from_user(&hs, uarg, sizeof(hs)))
		return -EFAULT;
	if (hs.flags || hs.pad || !mrmon_zero(hs.reserved, ARRAY_SIZE(hs.reserved)))
		return -EINVAL;
	if (hs.abi_version != MRMON_ABI_VERSION)
		ret = -EPROTONOSUPPORT;	/* hs still says which one we speak */
	hs.abi_version = MRMON_ABI_VERSION;
	hs.features = MRMON_FEATURE_EVENTS | MRMON_FEATURE_BATCH;
	if (mrmon_pfn_check)
		hs.features |= MRMON_FEATURE_PFN_CHECK;
	hs.max_slots = mrmon_max_slots;
	hs.max_events = mrmon_max_events;
	hs.max_batch = mrmon_max_batch;
	hs.header_size = PAGE_SIZE;
	hs.event_size = sizeof(struct mrmon_event);
	if (copy_to_user(uarg, &hs, sizeof(hs)))
		return -EFAULT;
	return ret;
}

static void mrmon_map_free(struct mrmon_ctx *ctx)
{
	unsigned int i;

	if (ctx->map)
		vunmap(ctx->map);
	for (i = 0; ctx->pages && i < ctx->npages; i++)
		if (ctx->pages[i])
			__free_page(ctx->pages[i]);
	kvfree(ctx->pages);
	ctx->map = NULL;
	ctx->pages = NULL;
}

/* The shared map: a header page, then one u64 word per slot. Charged to
 * the caller's memory cgroup like everything SETUP allocates. */
static int mrmon_map_alloc(struct mrmon_ctx *ctx, u32 nslots)
{
	unsigned int i;

	ctx->npages = 1 + DIV_ROUND_UP((size_t)nslots * sizeof(u64), PAGE_SIZE);
	ctx->pages = kvcalloc(ctx->npages, sizeof(*ctx->pages),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ctx->pages)
		return -ENOMEM;
	for (i = 0; i < ctx->npages; i++) {
		ctx->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!ctx->pages[i])
			return -ENOMEM;
	}
	ctx->map = vmap(ctx->pages, ctx->npages, VM_MAP, PAGE_KERNEL);
	if (!ctx->map)
		return -ENOMEM;
	ctx->hdr = ctx->map;
	ctx->words = ctx->map + PAGE_SIZE;
	ctx->hdr->nslots = nslots;
	return 0;
}

static long mrmon_setup(struct mrmon_ctx *ctx, void __user *uarg)
{
	struct mrmon_setup su;
	u32 i;
	int ret;

	if (copy_from_user(&su, uarg, sizeof(su)))
		return -EFAULT;
	if (su.flags || su.pad || su.map_size ||
	    !mrmon_zero(su.reserved, ARRAY_SIZE(su.reserved)))
		return -EINVAL;
	if (!su.nslots || su.nslots > mrmon_max_slots ||
	    !su.nevents || su.nevents > mrmon_max_events)
		return -EINVAL;
	if (ctx->setup_done)
		return -EBUSY;

	ret = -ENOMEM;
	/* Sized by the caller: a failure is its -ENOMEM, not a kernel splat. */
	ctx->slots = kvcalloc(su.nslots, sizeof(*ctx->slots),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	ctx->ring = kvcalloc(su.nevents, sizeof(*ctx->ring),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ctx->slots || !ctx->ring)
		goto fail;
	ret = mrmon_map_alloc(ctx, su.nslots);
	if (ret)
		goto fail;
	ret = mrmon_pfn_hook_add(ctx);
	if (ret)
		goto fail;
	for (i = 0; i < su.nslots; i++) {
		ctx->slots[i].ctx = ctx;
		ctx->slots[i].next_free = i + 1 < su.nslots ? i + 1 : MRMON_SLOT_NONE;
		INIT_LIST_HEAD(&ctx->slots[i].suspect);
	}
	ctx->free_head = 0;
	ctx->nslots = su.nslots;
	ctx->nevents = su.nevents;

	su.map_size = (u64)ctx->npages * PAGE_SIZE;
	if (copy_to_user(uarg, &su, sizeof(su))) {
		ret = -EFAULT;
		goto fail_hook;
	}
	/* Publishes everything above to mmap, read and poll. */
	smp_store_release(&ctx->setup_done, 1);
	return 0;

fail_hook:
	mrmon_pfn_hook_del(ctx);
fail:
	mrmon_map_free(ctx);
	kvfree(ctx->ring);
	kvfree(ctx->slots);
	ctx->ring = NULL;
	ctx->slots = NULL;
	return ret;
}

static int mrmon_watch_one(struct mrmon_ctx *ctx, struct mrmon_range *r)
{
	unsigned long start, end;
	struct mrmon_slot *slot;
	u32 idx;
	int ret;

	if (r->flags || !r->len || r->start + r->len < r->start)
		return -EINVAL;
	start = r->start & PAGE_MASK;
	end = PAGE_ALIGN(r->start + r->len);
	/* The sum does not overflow, so only the rounding can wrap, to 0
	 * (for start 0, `end < r->start` would miss it). */
	if (!end || end > TASK_SIZE)
		return -EINVAL;

	idx = ctx->free_head;
	if (idx == MRMON_SLOT_NONE)
		return -ENOSPC;
	slot = &ctx->slots[idx];
	slot->start = start;
	slot->end = end;
	slot->cookie = r->cookie;
	slot->gen = ++ctx->next_gen;
	spin_lock(&ctx->lock);
	smp_store_release(&ctx->words[idx], slot->gen << 1 | MRMON_WORD_VALID);
	spin_unlock(&ctx->lock);

	ret = mmu_interval_notifier_insert(&slot->sub, ctx->mm, start,
					   end - start, &mrmon_interval_ops);
	if (ret) {
		spin_lock(&ctx->lock);
		smp_store_release(&ctx->words[idx], slot->gen << 1);
		spin_unlock(&ctx->lock);
		return ret;
	}
	ctx->free_head = slot->next_free;
	slot->in_use = true;
	mmu_interval_read_begin(&slot->sub);

	r->slot = idx;
	r->expected = slot->gen << 1 | MRMON_WORD_VALID;
	return 0;
}

static int mrmon_unwatch_one(struct mrmon_ctx *ctx,
			     const struct mrmon_unwatch_entry *e)
{
	struct mrmon_slot *slot;

	if (e->flags || e->slot >= ctx->nslots)
		return -EINVAL;
	slot = &ctx->slots[e->slot];
	if (!slot->in_use || slot->gen != e->expected >> 1)
		return -ESTALE;
	/* Waits for a callback running on this slot; none runs after. */
	mmu_interval_notifier_remove(&slot->sub);
	spin_lock(&ctx->lock);
	smp_store_release(&ctx->words[e->slot], slot->gen << 1);
	mrmon_slot_suspect_drop(slot);
	spin_unlock(&ctx->lock);
	slot->in_use = false;
	slot->next_free = ctx->free_head;
	ctx->free_head = e->slot;
	return 0;
}

static long mrmon_batch(struct mrmon_ctx *ctx, void __user *uarg, bool watch)
{
	struct mrmon_batch b;
	size_t esize = watch ? sizeof(struct mrmon_range)
			     : sizeof(struct mrmon_unwatch_entry);
	union {
		struct mrmon_range r;
		struct mrmon_unwatch_entry u;
	} e;
	void __user *ue;
	long ret = 0;

	if (copy_from_user(&b, uarg, sizeof(b)))
		return -EFAULT;
	if (b.flags || b.pad || b.done ||
	    !mrmon_zero(b.reserved, ARRAY_SIZE(b.reserved)))
		return -EINVAL;
	if (!b.count || b.count > mrmon_max_batch)
		return -EINVAL;
	if (!smp_load_acquire(&ctx->setup_done))
		return -EBADFD;

	mutex_lock(&ctx->mutex);
	for (b.done = 0; b.done < b.count; b.done++) {
		ue = u64_to_user_ptr(b.entries + (u64)b.done * esize);
		if (copy_from_user(&e, ue, esize)) {
			ret = -EFAULT;
			break;
		}
		if (watch) {
			ret = mrmon_watch_one(ctx, &e.r);
			if (!ret && copy_to_user(ue, &e.r, esize)) {
				/* The caller cannot learn the slot: undo. */
				struct mrmon_unwatch_entry u = {
					.slot = e.r.slot, .expected = e.r.expected,
				};

				mrmon_unwatch_one(ctx, &u);
				ret = -EFAULT;
			}
		} else {
			ret = mrmon_unwatch_one(ctx, &e.u);
		}
		if (ret)
			break;
	}
	mutex_unlock(&ctx->mutex);
	if (copy_to_user(uarg, &b, sizeof(b)))
		return -EFAULT;
	return ret;
}

long mrmon_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct mrmon_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (current->mm != ctx->mm)
		return -EPERM;
	switch (cmd) {
	case MRMON_IOC_HANDSHAKE:
		return mrmon_handshake(ctx, uarg);
	case MRMON_IOC_SETUP:
		mutex_lock(&ctx->mutex);
		ret = mrmon_setup(ctx, uarg);
		mutex_unlock(&ctx->mutex);
		return ret;
	case MRMON_IOC_WATCH:
		return mrmon_batch(ctx, uarg, true);
	case MRMON_IOC_UNWATCH:
		return mrmon_batch(ctx, uarg, false);
	default:
		return -ENOTTY;
	}
}

/* Last reference gone: no ioctl, read or mmap can run any more. */
void mrmon_ctx_free(struct mrmon_ctx *ctx)
{
	u32 i;

	for (i = 0; ctx->setup_done && i < ctx->nslots; i++)
		if (ctx->slots[i].in_use)
			mmu_interval_notifier_remove(&ctx->slots[i].sub);
	if (ctx->setup_done)
		mrmon_pfn_hook_del(ctx);
	mrmon_map_free(ctx);
	kvfree(ctx->ring);
	kvfree(ctx->slots);
	mmdrop(ctx->mm);
	kfree(ctx);
}
