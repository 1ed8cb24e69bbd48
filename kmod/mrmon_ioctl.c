// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_ioctl.c - the ioctl entry point: HANDSHAKE, and the batches of
 * WATCH, UNWATCH and REVALIDATE entries (mrmon_watch.c does one entry;
 * mrmon_setup.c does SETUP).
 */
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include "mrmon.h"

static long mrmon_handshake(void __user *uarg)
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
	hs.features = MRMON_FEATURE_EVENTS | MRMON_FEATURE_BATCH |
		      MRMON_FEATURE_REVALIDATE;
	hs.max_slots = mrmon_limit(&mrmon_max_slots);
	hs.max_events = mrmon_limit(&mrmon_max_events);
	hs.max_batch = mrmon_limit(&mrmon_max_batch);
	hs.header_size = PAGE_SIZE;
	hs.event_size = sizeof(struct mrmon_event);
	if (copy_to_user(uarg, &hs, sizeof(hs)))
		return -EFAULT;
	return ret;
}

union mrmon_entry {
	struct mrmon_range r;
	struct mrmon_unwatch_entry u;
};

/*
 * Under ctx->mutex: one entry of a batch, its outputs written back.  The
 * copies have constant sizes, which spares each the hardened-usercopy
 * check of the object's bounds (2.7% of a WATCH in the guest's profile).
 */
static int mrmon_batch_one(struct mrmon_ctx *ctx, unsigned int cmd,
			   void __user *ue)
{
	union mrmon_entry e;
	int ret;

	switch (cmd) {
	case MRMON_IOC_WATCH:
		if (copy_from_user(&e.r, ue, sizeof(e.r)))
			return -EFAULT;
		ret = mrmon_watch_one(ctx, &e.r);
		if (!ret && copy_to_user(ue, &e.r, sizeof(e.r))) {
			/* The caller cannot learn the slot: undo. */
			struct mrmon_unwatch_entry u = {
				.slot = e.r.slot, .expected = e.r.expected,
			};

			mrmon_unwatch_one(ctx, &u);
			ret = -EFAULT;
		}
		return ret;
	case MRMON_IOC_UNWATCH:
		if (copy_from_user(&e.u, ue, sizeof(e.u)))
			return -EFAULT;
		return mrmon_unwatch_one(ctx, &e.u);
	default: {
		u64 old;

		if (copy_from_user(&e.u, ue, sizeof(e.u)))
			return -EFAULT;
		old = e.u.expected;
		ret = mrmon_revalidate_one(ctx, &e.u);
		if (!ret && copy_to_user(ue, &e.u, sizeof(e.u))) {
			/* The caller cannot learn the new word: keep the old
			 * generation so it can still unwatch.
			 */
			if (e.u.expected && e.u.expected != old)
				mrmon_revalidate_undo(ctx, e.u.slot, old);
			ret = -EFAULT;
		}
		return ret;
	}
	}
}

/**
 * mrmon_batch() - WATCH, UNWATCH or REVALIDATE ioctl
 * @ctx: the descriptor; current->mm == ctx->mm
 * @cmd: which of the three
 * @uarg: struct mrmon_batch in user memory
 *
 * Entries run in order under ctx->mutex; the first error stops the batch
 * and `done` says how many took effect.
 *
 * Return: 0, or the first entry's error, or -EINVAL/-EBADFD/-EFAULT for
 * the batch itself.
 */
static long mrmon_batch(struct mrmon_ctx *ctx, unsigned int cmd, void __user *uarg)
{
	size_t esize = cmd == MRMON_IOC_WATCH ? sizeof(struct mrmon_range)
					      : sizeof(struct mrmon_unwatch_entry);
	struct mrmon_batch b;
	long ret = 0;

	if (copy_from_user(&b, uarg, sizeof(b)))
		return -EFAULT;
	if (b.flags || b.pad || b.done ||
	    !mrmon_zero(b.reserved, ARRAY_SIZE(b.reserved)))
		return -EINVAL;
	if (!b.count || b.count > mrmon_limit(&mrmon_max_batch))
		return -EINVAL;
	/* Pairs with mrmon_setup()'s release: slots and words exist. */
	if (!smp_load_acquire(&ctx->setup_done))
		return -EBADFD;

	mutex_lock(&ctx->mutex);
	for (b.done = 0; b.done < b.count; b.done++) {
		ret = mrmon_batch_one(ctx, cmd,
				      u64_to_user_ptr(b.entries + (u64)b.done * esize));
		if (ret)
			break;
	}
	mutex_unlock(&ctx->mutex);
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
		return mrmon_handshake(uarg);
	case MRMON_IOC_SETUP:
		mutex_lock(&ctx->mutex);
		ret = mrmon_setup(ctx, uarg);
		mutex_unlock(&ctx->mutex);
		return ret;
	default:
		return mrmon_batch(ctx, cmd, uarg);
	}
}
