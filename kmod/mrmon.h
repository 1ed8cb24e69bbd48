/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mrmon.h - module-internal declarations.
 *
 * One context per open descriptor, bound to the opener's mm.  Locks:
 *
 *   ctx->mutex  (sleeping) serialises SETUP, WATCH and UNWATCH: slot
 *               allocation, the free list, the generation counter.  It may
 *               be held across copy_from_user, allocation and
 *               mmu_interval_notifier_insert/remove (which take mmap_lock
 *               or wait for invalidations); the notifier never takes it,
 *               and no path takes it with mmap_lock held (mmap takes no
 *               context lock at all).
 *   ctx->lock   (spinlock, leaf) guards the words, the header counters,
 *               the event ring, the overflow flag and every slot's PFN
 *               snapshot.  Taken by the notifier callback; never held
 *               across anything that sleeps, allocates or takes mmap_lock.
 */
#ifndef MRMON_INTERNAL_H
#define MRMON_INTERNAL_H

#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <uapi/linux/mrmon.h>
#include "mrmon_probes.h"

#define MRMON_SLOT_NONE		((u32)~0u)
/* PFN runs a slot remembers across a CLEAR (see mrmon_pfn.c). */
#define MRMON_PFN_RUNS		4
/* Concurrent CLEARs a slot can wait for; one more invalidates it. */
#define MRMON_CLEAR_INFLIGHT	4

struct mrmon_ctx;
struct mrmon_mm_hook;

struct mrmon_pfn_run {
	unsigned long addr;	/* first page of the run */
	unsigned long pfn;	/* its PFN; the run is contiguous */
	unsigned long npages;
};

struct mrmon_slot {
	struct mmu_interval_notifier sub;	/* inserted while in use */
	struct mrmon_ctx *ctx;
	/* Set under ctx->mutex before the notifier is inserted and not
	 * changed until it is removed: the callback reads them freely. */
	unsigned long start, end;
	u64 cookie;
	u64 gen;
	u32 next_free;		/* free list, under ctx->mutex */
	bool in_use;		/* under ctx->mutex */
	/* CLEARs in flight over this slot, by the identity of their range
	 * (the same object reaches invalidate_range_end), and the PFNs of
	 * [snap_start, snap_end) seen when the first began (ctx->lock). */
	unsigned int clear_inflight;
	const struct mmu_notifier_range *inflight[MRMON_CLEAR_INFLIGHT];
	unsigned long snap_start, snap_end;
	unsigned int nruns;
	struct mrmon_pfn_run runs[MRMON_PFN_RUNS];
	struct list_head suspect;	/* on ctx->suspects, under ctx->lock */
};

struct mrmon_ctx {
	struct mm_struct *mm;		/* the opener's; mmgrab()bed */
	struct mutex mutex;
	spinlock_t lock;
	wait_queue_head_t wq;		/* readers and pollers */

	/* Set once by SETUP, then immutable; readers check setup_done
	 * with an acquire load first. */
	int setup_done;
	u32 nslots, nevents;
	struct mrmon_slot *slots;
	struct page **pages;		/* header page + words */
	unsigned int npages;
	void *map;			/* vmap of pages */
	struct mrmon_header *hdr;
	u64 *words;
	struct mrmon_event *ring;

	/* Under ctx->mutex. */
	u32 free_head;
	u64 next_gen;

	/* Under ctx->lock. */
	u32 ring_head, ring_count;
	bool overflow_unreported;
	struct list_head suspects;	/* slots with a CLEAR in flight */

	/* The PFN check's per-mm range-end hook (mrmon_pfn.c), NULL when
	 * the check is off; ctx is on its list through hook_node. */
	struct mrmon_mm_hook *end_hook;
	struct list_head hook_node;
};

/* mrmon_ioctl.c */
long mrmon_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
void mrmon_ctx_free(struct mrmon_ctx *ctx);

/* mrmon_notify.c */
extern const struct mmu_interval_notifier_ops mrmon_interval_ops;
bool mrmon_word_clear_locked(struct mrmon_ctx *ctx, struct mrmon_slot *slot,
			     unsigned long start, unsigned long end, u32 cause);
void mrmon_slot_suspect_drop(struct mrmon_slot *slot);
void mrmon_slot_invalidate(struct mrmon_ctx *ctx, struct mrmon_slot *slot,
			   unsigned long start, unsigned long end, u32 cause);
bool mrmon_event_pop(struct mrmon_ctx *ctx, struct mrmon_event *ev);
void mrmon_event_unpop_lost(struct mrmon_ctx *ctx);
bool mrmon_events_ready(struct mrmon_ctx *ctx);

/* mrmon_pfn.c */
extern bool mrmon_pfn_check;
int mrmon_pfn_hook_add(struct mrmon_ctx *ctx);
void mrmon_pfn_hook_del(struct mrmon_ctx *ctx);
bool mrmon_pfn_clear_begin(struct mrmon_ctx *ctx, struct mrmon_slot *slot,
			   const struct mmu_notifier_range *range);
void mrmon_pfn_exit(void);

/* mrmon_main.c: limits (module parameters) */
extern unsigned int mrmon_max_slots, mrmon_max_events, mrmon_max_batch;

#endif
