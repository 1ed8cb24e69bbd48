// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_setup.c - SETUP (the shared map, the event ring, the slot table
 * and the descriptor's mmu_notifier) and the end of a context.
 * Everything SETUP allocates is charged to the opener's memory cgroup
 * (GFP_KERNEL_ACCOUNT), not to RLIMIT_MEMLOCK: nothing here is pinned
 * user memory.  The descriptor's limits were read at open.
 *
 * Lifetime: the context is freed by the notifier's free_notifier, after
 * mmu_notifier_put() and an SRCU grace period, so a callback still running
 * on another CPU never sees it freed; ->release itself never waits for
 * the owner's invalidations (docs/mrmon.md, "Release").
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mrmon.h"

/* The shared map: a header page, then one u64 word per slot.  vmalloc
 * memory, so it can be freed from the SRCU callback (vfree defers).
 */
static int mrmon_map_alloc(struct mrmon_ctx *ctx, u32 nslots)
{
	ctx->npages = 1 + DIV_ROUND_UP((size_t)nslots * sizeof(u64), PAGE_SIZE);
	ctx->map = __vmalloc((size_t)ctx->npages * PAGE_SIZE,
			     GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!ctx->map)
		return -ENOMEM;
	ctx->hdr = ctx->map;
	ctx->words = ctx->map + PAGE_SIZE;
	ctx->hdr->nslots = nslots;
	return 0;
}

/* What SETUP allocated; any context (kvfree, vfree). */
static void mrmon_setup_free(struct mrmon_ctx *ctx)
{
	mrmon_slots_free(ctx);
	vfree(ctx->map);
	ctx->map = NULL;
	kvfree(ctx->ring);
	ctx->ring = NULL;
}

/**
 * mrmon_setup() - the SETUP ioctl
 * @ctx: the descriptor; ctx->mutex held; current->mm == ctx->mm
 * @uarg: struct mrmon_setup in user memory
 *
 * Return: 0; -EINVAL for a bad argument; -EBUSY if already set up;
 * -ENOMEM without memory (the memory cgroup's limit included); -EFAULT;
 * -EINTR if a fatal signal interrupted the notifier's registration.
 */
long mrmon_setup(struct mrmon_ctx *ctx, void __user *uarg)
{
	struct mrmon_setup su;
	int ret;

	lockdep_assert_held(&ctx->mutex);
	if (copy_from_user(&su, uarg, sizeof(su)))
		return -EFAULT;
	if (su.flags || su.pad || su.map_size ||
	    !mrmon_zero(su.reserved, ARRAY_SIZE(su.reserved)))
		return -EINVAL;
	if (!su.nslots || su.nslots > ctx->lim.max_slots ||
	    !su.nevents || su.nevents > ctx->lim.max_events)
		return -EINVAL;
	if (ctx->setup_done)
		return -EBUSY;

	ret = -ENOMEM;
	/* Sized by the caller: a failure is its -ENOMEM, not a kernel splat. */
	ctx->ring = kvcalloc(su.nevents, sizeof(*ctx->ring),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!ctx->ring)
		goto fail;
	ret = mrmon_map_alloc(ctx, su.nslots);
	if (ret)
		goto fail;
	ret = mrmon_slots_alloc(ctx, su.nslots);
	if (ret)
		goto fail;
	/* Set before the notifier can run: its callbacks use them. */
	ctx->nslots = su.nslots;
	ctx->nevents = su.nevents;
	ctx->mn.ops = &mrmon_mn_ops;
	/* Takes mmap_lock for writing; mmap and the fault handler take no
	 * context lock, so holding ctx->mutex here cannot deadlock.  Before
	 * the copy back: an EINTR here must leave the caller's struct as it
	 * was, so that the same call can be retried.
	 */
	ret = mmu_notifier_register(&ctx->mn, ctx->mm);
	if (ret)
		goto unset;
	su.map_size = (u64)ctx->npages * PAGE_SIZE;
	if (copy_to_user(uarg, &su, sizeof(su))) {
		/* No watch exists yet: nothing to wait for but the SRCU
		 * grace period, in the owner's own call.
		 */
		mmu_notifier_unregister(&ctx->mn, ctx->mm);
		ret = -EFAULT;
		goto unset;
	}
	/* Publishes everything above to WATCH, mmap, read and poll. */
	smp_store_release(&ctx->setup_done, 1);
	return 0;

unset:
	ctx->nslots = 0;
	ctx->nevents = 0;
fail:
	mrmon_setup_free(ctx);
	return ret;
}

/**
 * mrmon_ctx_free() - free a context
 * @ctx: unreachable: no file, no callback can run on it
 *
 * Context: any, even the SRCU callback with bottom halves off: only
 * kfree, kvfree and vfree (which defers).
 */
void mrmon_ctx_free(struct mrmon_ctx *ctx)
{
	mrmon_setup_free(ctx);
	mutex_destroy(&ctx->mutex);
	mutex_destroy(&ctx->read_mutex);
	kfree(ctx);
}

/**
 * mrmon_ctx_release() - the descriptor's last reference is gone
 * @ctx: no ioctl, read, mmap or fault can run on it any more
 *
 * Context: whoever dropped the last reference (the opener, a process that
 * received the descriptor, the unix-socket garbage collector, exit).
 * Waits for nothing the owner controls: the watches are taken out of the
 * tree at once and freed here, and the notifier is put, not unregistered:
 * its free_notifier frees the context after the callbacks in flight.
 */
void mrmon_ctx_release(struct mrmon_ctx *ctx)
{
	/* No call can run any more: a plain load sees SETUP's store. */
	bool registered = ctx->setup_done;

	mrmon_watches_free(ctx);
	mrmon_mm_put(ctx->mm_count);
	mmdrop(ctx->mm);
	if (registered)
		mmu_notifier_put(&ctx->mn);
	else
		mrmon_ctx_free(ctx);
}
