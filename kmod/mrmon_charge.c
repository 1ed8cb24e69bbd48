// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_charge.c - what a descriptor costs the kernel, charged to its user.
 *
 * Everything a descriptor allocates (the map, the event ring, one struct
 * mrmon_watch per watch) is unswappable kernel memory that any local user
 * can ask for.  It is charged twice: to the opener's memory cgroup
 * (GFP_KERNEL_ACCOUNT and SLAB_ACCOUNT at each allocation), and, in
 * pages, to the opener's user->locked_vm against RLIMIT_MEMLOCK, the
 * counter io_uring charges its pinned buffers to.  The second charge is
 * what bounds one user across all its processes and descriptors, and so
 * bounds how many watches a user can make overlap one range (docs/mrmon.md,
 * "Bounds").  An opener with CAP_IPC_LOCK is not limited, as in io_uring.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include "mrmon.h"

static int mrmon_locked_vm_add(struct mrmon_ctx *ctx, unsigned long pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	unsigned long cur, new;

	if (ctx->unlimited) {
		atomic_long_add(pages, &ctx->user->locked_vm);
		return 0;
	}
	cur = atomic_long_read(&ctx->user->locked_vm);
	do {
		new = cur + pages;
		if (new < cur || new > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&ctx->user->locked_vm, &cur, new));
	return 0;
}

/**
 * mrmon_charge() - account @bytes more of @ctx's kernel memory
 * @ctx: the descriptor; ctx->lock held (the callbacks free watches)
 * @bytes: how much the caller is about to allocate
 *
 * Return: 0, or -ENOMEM when the user's RLIMIT_MEMLOCK would be exceeded.
 */
int mrmon_charge(struct mrmon_ctx *ctx, size_t bytes)
{
	unsigned long pages = DIV_ROUND_UP(ctx->charged_bytes + bytes, PAGE_SIZE);
	int ret;

	lockdep_assert_held(&ctx->lock);
	if (pages > ctx->charged_pages) {
		ret = mrmon_locked_vm_add(ctx, pages - ctx->charged_pages);
		if (ret)
			return ret;
		ctx->charged_pages = pages;
	}
	ctx->charged_bytes += bytes;
	return 0;
}

/**
 * mrmon_uncharge() - give back what mrmon_charge() accounted
 * @ctx: the descriptor; ctx->lock held
 * @bytes: as charged
 */
void mrmon_uncharge(struct mrmon_ctx *ctx, size_t bytes)
{
	unsigned long pages;

	lockdep_assert_held(&ctx->lock);
	ctx->charged_bytes -= bytes;
	pages = DIV_ROUND_UP(ctx->charged_bytes, PAGE_SIZE);
	atomic_long_sub(ctx->charged_pages - pages, &ctx->user->locked_vm);
	ctx->charged_pages = pages;
}

/* The context is being freed: return every page it still holds. */
void mrmon_uncharge_all(struct mrmon_ctx *ctx)
{
	atomic_long_sub(ctx->charged_pages, &ctx->user->locked_vm);
	ctx->charged_pages = 0;
	ctx->charged_bytes = 0;
}
