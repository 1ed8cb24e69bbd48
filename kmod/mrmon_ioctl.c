// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_ioctl.c - the ioctl entry point: HANDSHAKE, and the batches of
 * WATCH and UNWATCH entries (mrmon_watch.c does one entry; mrmon_setup.c
 * does SETUP).  ABI 2's REVALIDATE answers -EOPNOTSUPP (docs/abi.md).
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include "mrmon.h"

static long mrmon_handshake(const struct mrmon_ctx *ctx, void __user *uarg)
{
	struct mrmon_handshake hs;
	long ret = 0;

	if (copy_from_user(&hs, uarg, sizeof(hs)))
		return -EFAULT;
	/* Outputs must be zero too, so they can become inputs later. */
	if (hs.flags || hs.pad || hs.features || hs.max_slots || hs.max_events ||
	    hs.max_batch || hs.header_size || hs.event_size ||
	    !mrmon_zero(hs.reserved, ARRAY_SIZE(hs.reserved)))
		return -EINVAL;
	if (hs.abi_version != MRMON_ABI_VERSION)
		ret = -EPROTONOSUPPORT;	/* hs still says which one we speak */
	hs.abi_version = MRMON_ABI_VERSION;
	hs.features = MRMON_FEATURE_EVENTS | MRMON_FEATURE_BATCH;
	/* The descriptor's own limits, read at open. */
	hs.max_slots = ctx->lim.max_slots;
	hs.max_events = ctx->lim.max_events;
	hs.max_batch = ctx->lim.max_batch;
	hs.header_size = PAGE_SIZE;
	hs.event_size = sizeof(struct mrmon_event);
	if (copy_to_user(uarg, &hs, sizeof(hs)))
		return -EFAULT;
	return ret;
}

/* Entries of a batch this small are copied to the stack. */
#define MRMON_BATCH_STACK	4

/* WATCH: every entry in order, then the outputs back in one copy. */
static int mrmon_watch_batch(struct mrmon_ctx *ctx, struct mrmon_range *r,
			     u32 count, u32 *done, void __user *ue)
{
	struct mrmon_watch *spare = NULL;
	int ret = 0;
	u32 i;

	for (*done = 0; *done < count; (*done)++) {
		ret = mrmon_watch_one(ctx, &r[*done], &spare);
		if (ret)
			break;
	}
	mrmon_watch_free(spare);
	if (*done && copy_to_user(ue, r, *done * sizeof(*r))) {
		/* The caller cannot learn the slots: undo (an entry an
		 * invalidation already freed answers -ESTALE, harmlessly).
		 */
		for (i = 0; i < *done; i++) {
			struct mrmon_unwatch_entry u = {
				.slot = r[i].slot, .expected = r[i].expected,
			};

			if (u.expected)
				mrmon_unwatch_one(ctx, &u);
		}
		*done = 0;
		ret = -EFAULT;
	}
	return ret;
}

/**
 * mrmon_batch() - WATCH or UNWATCH ioctl
 * @ctx: the descriptor; current->mm == ctx->mm
 * @cmd: which of the two
 * @uarg: struct mrmon_batch in user memory
 *
 * The entries are copied in (at most max_batch of them) before any lock
 * is taken and the outputs copied out after: a page fault on the array
 * (userfaultfd, FUSE) delays only this call.  The first error stops the
 * batch and `done` says how many took effect.
 *
 * Return: 0, or the first entry's error, or -EINVAL/-EBADFD/-EFAULT/
 * -ENOMEM for the batch itself.
 */
static long mrmon_batch(struct mrmon_ctx *ctx, unsigned int cmd, void __user *uarg)
{
	size_t esize = cmd == MRMON_IOC_WATCH ? sizeof(struct mrmon_range)
					      : sizeof(struct mrmon_unwatch_entry);
	struct mrmon_range stack[MRMON_BATCH_STACK];
	void __user *ue;
	struct mrmon_batch b;
	void *e = stack;
	long ret = 0;

	if (copy_from_user(&b, uarg, sizeof(b)))
		return -EFAULT;
	if (b.flags || b.pad || b.done ||
	    !mrmon_zero(b.reserved, ARRAY_SIZE(b.reserved)))
		return -EINVAL;
	if (!b.count || b.count > ctx->lim.max_batch)
		return -EINVAL;
	/* Pairs with mrmon_setup()'s release: slots, words and notifier exist. */
	if (!smp_load_acquire(&ctx->setup_done))
		return -EBADFD;

	ue = u64_to_user_ptr(b.entries);
	if (b.count * esize > sizeof(stack)) {
		e = kvmalloc_array(b.count, esize, GFP_KERNEL_ACCOUNT);
		if (!e)
			return -ENOMEM;
	}
	if (copy_from_user(e, ue, b.count * esize)) {
		ret = -EFAULT;
		goto out;
	}
	if (cmd == MRMON_IOC_WATCH) {
		ret = mrmon_watch_batch(ctx, e, b.count, &b.done, ue);
	} else {
		struct mrmon_unwatch_entry *u = e;

		for (b.done = 0; b.done < b.count; b.done++) {
			ret = mrmon_unwatch_one(ctx, &u[b.done]);
			if (ret)
				break;
		}
	}
out:
	if (e != stack)
		kvfree(e);
	if (copy_to_user(uarg, &b, sizeof(b)))
		return -EFAULT;
	return ret;
}

static bool mrmon_cmd_known(unsigned int cmd)
{
	switch (cmd) {
	case MRMON_IOC_HANDSHAKE:
	case MRMON_IOC_SETUP:
	case MRMON_IOC_WATCH:
	case MRMON_IOC_UNWATCH:
	case MRMON_IOC_REVALIDATE:
		return true;
	default:
		return false;
	}
}

/**
 * mrmon_ioctl() - /dev/mrmon's unlocked_ioctl
 * @file: the descriptor
 * @cmd: MRMON_IOC_*
 * @arg: user pointer to the command's struct
 *
 * Context: process context; any caller is hostile until checked: an
 * unknown command gets -ENOTTY, a caller in another mm -EPERM.  A 32-bit
 * caller never gets here: with no compat_ioctl the kernel answers it
 * -ENOTTY (the ABI is 64-bit only).
 *
 * Return: 0 or -errno (docs/abi.md has the table).
 */
long mrmon_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct mrmon_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (!mrmon_cmd_known(cmd))
		return -ENOTTY;
	if (current->mm != ctx->mm)
		return -EPERM;
	switch (cmd) {
	case MRMON_IOC_HANDSHAKE:
		return mrmon_handshake(ctx, uarg);
	case MRMON_IOC_SETUP:
		if (mutex_lock_killable(&ctx->mutex))
			return -EINTR;
		ret = mrmon_setup(ctx, uarg);
		mutex_unlock(&ctx->mutex);
		return ret;
	case MRMON_IOC_REVALIDATE:
		return -EOPNOTSUPP;
	default:
		return mrmon_batch(ctx, cmd, uarg);
	}
}
