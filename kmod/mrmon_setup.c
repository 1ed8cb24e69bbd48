// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_setup.c - SETUP (the shared map and the event ring) and freeing a
 * context.  Everything SETUP allocates is charged to the opener's memory
 * cgroup and to its RLIMIT_MEMLOCK (mrmon_charge.c).
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mrmon.h"

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

/* The shared map: a header page, then one u64 word per slot. */
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

static size_t mrmon_setup_bytes(const struct mrmon_setup *su)
{
	size_t map = (1 + DIV_ROUND_UP((size_t)su->nslots * sizeof(u64), PAGE_SIZE)) *
		     (PAGE_SIZE + sizeof(struct page *));
	/* A watch pointer and a free-stack entry (mrmon_slots_alloc()). */
	size_t slots = (size_t)su->nslots * (sizeof(struct mrmon_watch *) + sizeof(u32));

	return map + slots + (size_t)su->nevents * sizeof(struct mrmon_event);
}

/**
 * mrmon_setup() - the SETUP ioctl
 * @ctx: the descriptor; ctx->mutex held; current->mm == ctx->mm
 * @uarg: struct mrmon_setup in user memory
 *
 * Return: 0; -EINVAL for a bad argument; -EBUSY if already set up;
 * -ENOMEM when memory or the user's RLIMIT_MEMLOCK runs out; -EFAULT.
 */
long mrmon_setup(struct mrmon_ctx *ctx, void __user *uarg)
{
	struct mrmon_setup su;
	size_t bytes;
	int ret;

	lockdep_assert_held(&ctx->mutex);
	if (copy_from_user(&su, uarg, sizeof(su)))
		return -EFAULT;
	if (su.flags || su.pad || su.map_size ||
	    !mrmon_zero(su.reserved, ARRAY_SIZE(su.reserved)))
		return -EINVAL;
	if (!su.nslots || su.nslots > mrmon_limit(&mrmon_max_slots) ||
	    !su.nevents || su.nevents > mrmon_limit(&mrmon_max_events))
		return -EINVAL;
	if (ctx->setup_done)
		return -EBUSY;

	bytes = mrmon_setup_bytes(&su);
	ret = mrmon_charge(ctx, bytes);
	if (ret)
		return ret;
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

	su.map_size = (u64)ctx->npages * PAGE_SIZE;
	if (copy_to_user(uarg, &su, sizeof(su))) {
		ret = -EFAULT;
		goto fail;
	}
	/* Set only now: a context with nslots has its slot table. */
	ctx->nslots = su.nslots;
	ctx->nevents = su.nevents;
	/* Publishes everything above to mmap, read and poll. */
	smp_store_release(&ctx->setup_done, 1);
	return 0;

fail:
	mrmon_slots_free(ctx);
	mrmon_map_free(ctx);
	kvfree(ctx->ring);
	ctx->ring = NULL;
	mrmon_uncharge(ctx, bytes);
	return ret;
}

/**
 * mrmon_ctx_free() - the descriptor's last reference is gone
 * @ctx: no ioctl, read, mmap or fault can run on it any more
 *
 * Removes every watch's notifier, so nothing of this module stays
 * registered on the mm once its last descriptor is closed.
 */
void mrmon_ctx_free(struct mrmon_ctx *ctx)
{
	mrmon_watches_free(ctx);
	mrmon_map_free(ctx);
	kvfree(ctx->ring);
	mrmon_uncharge_all(ctx);
	mrmon_mm_put(ctx->mm_count);
	free_uid(ctx->user);
	mmdrop(ctx->mm);
	kfree(ctx);
}
