// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_main.c - /dev/mrmon: module parameters, open/release, the shared
 * map (mmap and its fault handler), read and poll.  The ABI is
 * include/uapi/linux/mrmon.h (docs/abi.md); the design is docs/mrmon.md.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "mrmon.h"

/*
 * The limits are bounded even for root: past these ceilings a SETUP's
 * arrays would exceed what kvcalloc() accepts (it warns past INT_MAX
 * bytes).  Every descriptor's memory is charged to its memory cgroup; the
 * watches' count and span are limited per mm (mrmon_mm.c).  A descriptor
 * reads all of them once, at open (mrmon_limits_read()).
 */
#define MRMON_SLOTS_CEILING	BIT(21)
#define MRMON_EVENTS_CEILING	BIT(20)
#define MRMON_BATCH_CEILING	BIT(16)

struct mrmon_limit mrmon_max_slots = { BIT(16), MRMON_SLOTS_CEILING };
struct mrmon_limit mrmon_max_events = { BIT(16), MRMON_EVENTS_CEILING };
struct mrmon_limit mrmon_max_batch = { 1024, MRMON_BATCH_CEILING };
struct mrmon_limit mrmon_max_watches_per_mm = { BIT(16), MRMON_SLOTS_CEILING };
/* 64 MiB: RLIMIT_MEMLOCK's Linux default is 8 MiB (1 TiB at most). */
struct mrmon_limit mrmon_span_floor_mb = { 64, BIT(20) };
/* With RLIMIT_MEMLOCK unlimited: 1 TiB of watched span per mm (128 TiB at most). */
struct mrmon_limit mrmon_max_span_per_mm_gb = { 1024, BIT(17) };

static int mrmon_limit_set(const char *val, const struct kernel_param *kp)
{
	struct mrmon_limit *limit = kp->arg;
	unsigned int v;
	int rc = kstrtouint(val, 0, &v);

	if (rc)
		return rc;
	if (!v || v > limit->ceiling)
		return -EINVAL;
	WRITE_ONCE(limit->value, v);
	return 0;
}

static int mrmon_limit_get(char *buf, const struct kernel_param *kp)
{
	const struct mrmon_limit *limit = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(limit->value));
}

static const struct kernel_param_ops mrmon_limit_ops = {
	.set = mrmon_limit_set,
	.get = mrmon_limit_get,
};

module_param_cb(max_slots, &mrmon_limit_ops, &mrmon_max_slots, 0644);
MODULE_PARM_DESC(max_slots, "Largest number of watches per descriptor (1..2^21)");
module_param_cb(max_events, &mrmon_limit_ops, &mrmon_max_events, 0644);
MODULE_PARM_DESC(max_events, "Largest event queue per descriptor (1..2^20)");
module_param_cb(max_batch, &mrmon_limit_ops, &mrmon_max_batch, 0644);
MODULE_PARM_DESC(max_batch, "Largest WATCH/UNWATCH batch (1..2^16)");
module_param_cb(max_watches_per_mm, &mrmon_limit_ops, &mrmon_max_watches_per_mm, 0644);
MODULE_PARM_DESC(max_watches_per_mm,
		 "Most watches of one address space, all descriptors (1..2^21)");
module_param_cb(span_floor_mb, &mrmon_limit_ops, &mrmon_span_floor_mb, 0644);
MODULE_PARM_DESC(span_floor_mb,
		 "Span the watches of one mm may cover at least, in MiB, whatever RLIMIT_MEMLOCK (1..2^20)");
module_param_cb(max_span_per_mm_gb, &mrmon_limit_ops, &mrmon_max_span_per_mm_gb, 0644);
MODULE_PARM_DESC(max_span_per_mm_gb,
		 "Span the watches of one mm may cover with RLIMIT_MEMLOCK unlimited, in GiB (1..2^17)");

/*
 * The descriptor's limits, read once: a later change of a parameter or of
 * the rlimit never changes a live descriptor.  The span is charged as the
 * registrations it protects would be (pinned memory against
 * RLIMIT_MEMLOCK, per mm), with a floor; an opener with CAP_IPC_LOCK is
 * not limited by it, and the check does not log an audit denial (as
 * io_uring's).
 */
static void mrmon_limits_read(struct mrmon_limits *lim)
{
	unsigned long memlock = rlimit(RLIMIT_MEMLOCK);
	u64 floor = (u64)mrmon_limit(&mrmon_span_floor_mb) << 20;

	lim->max_slots = mrmon_limit(&mrmon_max_slots);
	lim->max_events = mrmon_limit(&mrmon_max_events);
	lim->max_batch = mrmon_limit(&mrmon_max_batch);
	lim->max_watches_per_mm = mrmon_limit(&mrmon_max_watches_per_mm);
	if (ns_capable_noaudit(&init_user_ns, CAP_IPC_LOCK))
		lim->max_span = U64_MAX;
	else if (memlock == RLIM_INFINITY)
		lim->max_span = (u64)mrmon_limit(&mrmon_max_span_per_mm_gb) << 30;
	else
		lim->max_span = max_t(u64, memlock, floor);
}

/**
 * mrmon_open() - bind a new descriptor to the caller's mm, read its limits
 * @inode: /dev/mrmon
 * @file: the new file
 *
 * Context: process context, any local user.
 *
 * Return: 0; -EPERM for a kernel thread (no mm); -ENOMEM; -EINTR.
 */
static int mrmon_open(struct inode *inode, struct file *file)
{
	struct mrmon_ctx *ctx;

	if (!current->mm)
		return -EPERM;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->mm_count = mrmon_mm_get(current->mm);
	if (IS_ERR(ctx->mm_count)) {
		long ret = PTR_ERR(ctx->mm_count);

		kfree(ctx);
		return ret;
	}
	ctx->mm = current->mm;
	mmgrab(ctx->mm);
	mrmon_limits_read(&ctx->lim);
	mutex_init(&ctx->mutex);
	mutex_init(&ctx->read_mutex);
	spin_lock_init(&ctx->lock);
	ctx->tree = RB_ROOT_CACHED;
	init_waitqueue_head(&ctx->wq);
	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

/**
 * mrmon_release() - the last reference to a descriptor is gone
 * @inode: /dev/mrmon
 * @file: the file
 *
 * Context: whoever dropped the last reference (the opener, a process that
 * received the descriptor, exit); never waits on the owner's mm
 * (mrmon_ctx_release()).
 *
 * Return: 0.
 */
static int mrmon_release(struct inode *inode, struct file *file)
{
	mrmon_ctx_release(file->private_data);
	return 0;
}

/**
 * mrmon_map_fault() - insert a page of the shared map
 * @vmf: the fault, in the owner's map VMA
 *
 * The map's pages are inserted on fault as special PTEs (VM_PFNMAP,
 * vmf_insert_pfn()): no struct page is reachable through the mapping, so
 * GUP, GUP-fast and vmsplice() of a word page fail.  A zap of the map
 * (MADV_DONTNEED) only costs a fault on the next load.  The context lives
 * as long as the VMA: the VMA holds the file.
 *
 * Context: page fault, mmap_lock held (or the VMA lock); takes no context
 * lock.
 *
 * Return: VM_FAULT_NOPAGE with the PTE set, or VM_FAULT_SIGBUS past the
 * map.
 */
static vm_fault_t mrmon_map_fault(struct vm_fault *vmf)
{
	struct mrmon_ctx *ctx = vmf->vma->vm_file->private_data;

	if (vmf->pgoff >= ctx->npages)
		return VM_FAULT_SIGBUS;
	return vmf_insert_pfn(vmf->vma, vmf->address,
			      vmalloc_to_pfn(ctx->map + (vmf->pgoff << PAGE_SHIFT)));
}

static const struct vm_operations_struct mrmon_vm_ops = {
	.fault = mrmon_map_fault,
};

/*
 * What mmap and mmap_prepare both refuse: another mm, a descriptor not set
 * up, a writable mapping, an offset, a length past the map.
 */
static int mrmon_map_check(struct mrmon_ctx *ctx, const struct mm_struct *mm,
			   vm_flags_t flags, pgoff_t pgoff, unsigned long pages)
{
	if (mm != ctx->mm || current->mm != ctx->mm)
		return -EPERM;
	/* Pairs with mrmon_setup()'s release: the map is complete. */
	if (!smp_load_acquire(&ctx->setup_done))
		return -EBADFD;
	if (flags & VM_WRITE)
		return -EPERM;
	if (pgoff || pages > ctx->npages)
		return -EINVAL;
	return 0;
}

#ifdef MRMON_HAVE_MMAP_PREPARE
/**
 * mrmon_mmap_prepare() - map the header and the words, read-only
 * @desc: the mapping to be, before its VMA exists (Linux 6.17+)
 *
 * Context: mmap_lock held for writing; takes no context lock.
 *
 * Return: as mrmon_map_check().
 */
static int mrmon_mmap_prepare(struct vm_area_desc *desc)
{
	int ret = mrmon_map_check(desc->file->private_data, desc->mm, desc->vm_flags,
				  desc->pgoff, (desc->end - desc->start) >> PAGE_SHIFT);

	if (ret)
		return ret;
	/* The flags mrmon_vma_flags() gives a VMA, on the descriptor. */
	desc->vm_flags = (desc->vm_flags | VM_IO | VM_PFNMAP | VM_DONTCOPY |
			  VM_DONTEXPAND | VM_DONTDUMP) & ~VM_MAYWRITE;
	desc->vm_ops = &mrmon_vm_ops;
	return 0;
}
#else
/*
 * Read-only for good (no VM_MAYWRITE), never inherited (VM_DONTCOPY, which
 * MADV_DOFORK cannot clear on a VM_IO mapping), special PTEs only
 * (VM_PFNMAP: GUP and GUP-fast find no page to pin or reference; VM_IO
 * makes the slow path refuse the VMA too), never grown, never dumped.
 */
static void mrmon_vma_flags(struct vm_area_struct *vma)
{
#ifdef MRMON_HAVE_VM_FLAGS_SET
	vm_flags_mod(vma, VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
		     VM_DONTDUMP, VM_MAYWRITE);
#else
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_IO | VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND |
			 VM_DONTDUMP;
#endif
}

/**
 * mrmon_mmap() - map the header and the words, read-only
 * @file: the descriptor, set up
 * @vma: the new mapping
 *
 * Context: mmap_lock held for writing; takes no context lock (WATCH holds
 * ctx->mutex while it may take mmap_lock).
 *
 * Return: 0; -EPERM from another mm or for a writable mapping; -EBADFD
 * before SETUP; -EINVAL for an offset or a length past the map.
 */
static int mrmon_mmap(struct file *file, struct vm_area_struct *vma)
{
	int ret = mrmon_map_check(file->private_data, vma->vm_mm, vma->vm_flags,
				  vma->vm_pgoff, vma_pages(vma));

	if (ret)
		return ret;
	mrmon_vma_flags(vma);
	vma->vm_ops = &mrmon_vm_ops;
	return 0;
}
#endif

/**
 * mrmon_read() - take queued events, whole ones only
 * @file: the descriptor
 * @buf: where they go
 * @len: its size; at least one event
 * @ppos: unused (not seekable)
 *
 * Events are copied straight from the ring to @buf and only then are
 * their slots given back (mrmon_events_copy()): one copy per event, one
 * lock round trip per contiguous piece of the ring.  One reader at a time
 * (ctx->read_mutex); a reader that finds none queued waits with the mutex
 * released.
 *
 * Context: process context in the owner's mm; sleeps (interruptibly)
 * unless O_NONBLOCK.
 *
 * Return: the bytes of the events copied; -EPERM, -EBADFD, -EINVAL,
 * -EAGAIN (none queued, or another read() in progress, with O_NONBLOCK),
 * -EFAULT (the events stay queued), -EINTR or -ERESTARTSYS.
 */
static ssize_t mrmon_read(struct file *file, char __user *buf, size_t len,
			  loff_t *ppos)
{
	struct mrmon_ctx *ctx = file->private_data;
	bool nonblock = file->f_flags & O_NONBLOCK;
	size_t want = len / sizeof(struct mrmon_event);
	long n;
	int ret;

	if (current->mm != ctx->mm)
		return -EPERM;
	/* Pairs with mrmon_setup()'s release: the ring is complete. */
	if (!smp_load_acquire(&ctx->setup_done))
		return -EBADFD;
	if (!want)
		return -EINVAL;
	/* No more than the ring and an OVERFLOW can be copied at once. */
	want = min_t(size_t, want, (size_t)ctx->nevents + 1);
	for (;;) {
		if (nonblock) {
			if (!mutex_trylock(&ctx->read_mutex))
				return -EAGAIN;
		} else {
			ret = mutex_lock_interruptible(&ctx->read_mutex);
			if (ret)
				return ret;
		}
		n = mrmon_events_copy(ctx, (struct mrmon_event __user *)buf, want);
		mutex_unlock(&ctx->read_mutex);
		if (n)
			return n < 0 ? n : n * sizeof(struct mrmon_event);
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(ctx->wq, mrmon_events_ready(ctx));
		if (ret)
			return ret;
	}
}

/**
 * mrmon_poll() - readable while events are queued
 * @file: the descriptor
 * @wait: the poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM with events pending, EPOLLERR from another
 * mm or before SETUP, else 0.
 */
static __poll_t mrmon_poll(struct file *file, poll_table *wait)
{
	struct mrmon_ctx *ctx = file->private_data;

	/* The acquire pairs with mrmon_setup()'s release. */
	if (current->mm != ctx->mm || !smp_load_acquire(&ctx->setup_done))
		return EPOLLERR;
	poll_wait(file, &ctx->wq, wait);
	return mrmon_events_ready(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
}

/* No compat_ioctl: the ABI is 64-bit only (a 32-bit caller gets ENOTTY). */
static const struct file_operations mrmon_fops = {
	.owner = THIS_MODULE,
	.open = mrmon_open,
	.release = mrmon_release,
	.unlocked_ioctl = mrmon_ioctl,
#ifdef MRMON_HAVE_MMAP_PREPARE
	.mmap_prepare = mrmon_mmap_prepare,
#else
	.mmap = mrmon_mmap,
#endif
	.read = mrmon_read,
	.poll = mrmon_poll,
};

static struct miscdevice mrmon_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "mrmon",
	.fops = &mrmon_fops,
	.mode = 0666,
};

static int __init mrmon_init(void)
{
	int ret = mrmon_watch_cache_init();

	if (ret)
		return ret;
	ret = misc_register(&mrmon_dev);
	if (ret)
		mrmon_watch_cache_exit();
	return ret;
}

static void __exit mrmon_exit(void)
{
	misc_deregister(&mrmon_dev);
	/* Contexts still waiting for their SRCU grace period are freed. */
	mmu_notifier_synchronize();
	mrmon_watch_cache_exit();
}

module_init(mrmon_init);
module_exit(mrmon_exit);
MODULE_LICENSE("Dual MIT/GPL");
MODULE_DESCRIPTION("mrcache VM-activity monitor: invalidates watched ranges in shared memory");
