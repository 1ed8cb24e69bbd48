/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mrmon.h - module-internal declarations.
 *
 * One context per open descriptor, bound to the opener's mm, and one
 * struct mrmon_watch per watched range.  Locks, outermost first:
 *
 *   ctx->mutex  (sleeping) serialises SETUP, WATCH, UNWATCH and
 *               REVALIDATE: the slot table (slot_watch, free_slots,
 *               nfree), the generation counter, the memory charge.
 *               Held across copy_from_user, allocation,
 *               mmu_interval_notifier_insert/remove (which may take
 *               mmap_lock for the mm's first notifier) and the snapshots
 *               of mrmon_snapshot.c (a lockless walk: no mmap_lock); the
 *               notifier never takes it, and no path takes it with
 *               mmap_lock held (mmap and the map's fault handler take no
 *               context lock).
 *   ctx->lock   (spinlock, leaf) guards the words, the header counters,
 *               the event ring, the overflow flag, and each watch's gen
 *               and changed fields.  Taken by the notifier callback; never
 *               held across anything that sleeps, allocates or takes
 *               mmap_lock.
 */
#ifndef MRMON_INTERNAL_H
#define MRMON_INTERNAL_H

#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/sched/user.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <uapi/linux/mrmon.h>
#include "mrmon_probes.h"

#if BITS_PER_LONG != 64
#error "mrmon needs a 64-bit kernel: user space loads each 64-bit word in one access"
#endif

/*
 * One watched range.  Allocated by WATCH, freed by UNWATCH or close; a
 * slot without a watch costs its word and its two entries of the slot
 * table.
 */
struct mrmon_watch {
	struct mmu_interval_notifier sub;	/* inserted while it lives */
	struct mrmon_ctx *ctx;
	u64 cookie;		/* set before insert, then immutable */
	u64 gen;		/* written under ctx->mutex and ctx->lock */
	u64 fingerprint;	/* the pages at WATCH (mrmon_snapshot.c) */
	u32 slot;
	bool has_snapshot;	/* fingerprint valid; under ctx->mutex */
	/* saw an event REVALIDATE cannot undo; under ctx->lock */
	bool changed;
};

static inline unsigned long mrmon_watch_start(const struct mrmon_watch *w)
{
	return w->sub.interval_tree.start;
}

static inline unsigned long mrmon_watch_end(const struct mrmon_watch *w)
{
	return w->sub.interval_tree.last + 1;
}

static inline u64 mrmon_word_of(u64 gen)
{
	return gen << 1 | MRMON_WORD_VALID;
}

/* Reserved fields must be zero. */
static inline bool mrmon_zero(const u64 *v, unsigned int n)
{
	while (n--)
		if (v[n])
			return false;
	return true;
}

struct mrmon_mm_count;

struct mrmon_ctx {
	struct mm_struct *mm;		/* the opener's; mmgrab()bed */
	struct mrmon_mm_count *mm_count;	/* its watches, all descriptors */
	struct user_struct *user;	/* the opener's; charged (mrmon_charge.c) */
	bool unlimited;			/* opener had CAP_IPC_LOCK */
	struct mutex mutex;
	spinlock_t lock;		/* see the top of the file */
	wait_queue_head_t wq;		/* readers and pollers */

	/* Set once by SETUP, then immutable; readers check setup_done
	 * with an acquire load first.
	 */
	int setup_done;
	u32 nslots, nevents;
	struct page **pages;		/* header page + words */
	unsigned int npages;
	void *map;			/* vmap of pages */
	struct mrmon_header *hdr;
	u64 *words;
	struct mrmon_event *ring;

	/* Under ctx->mutex.  The slot table, nslots entries each, allocated
	 * by SETUP: a slot either has its watch in slot_watch or is on the
	 * free stack, never both, and WATCH takes slots only off the stack.
	 */
	struct mrmon_watch **slot_watch;	/* slot -> its watch, or NULL */
	u32 *free_slots;		/* stack of the slots without a watch */
	u32 nfree;			/* its height */
	u64 next_gen;
	size_t charged_bytes;		/* what mrmon_charge() accounted */
	unsigned long charged_pages;	/* of it, on user->locked_vm */

	/* Under ctx->lock. */
	u32 ring_head, ring_count;
	bool overflow_unreported;
};

/* mrmon_ioctl.c */
long mrmon_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* mrmon_setup.c */
long mrmon_setup(struct mrmon_ctx *ctx, void __user *uarg);
void mrmon_ctx_free(struct mrmon_ctx *ctx);

/* mrmon_watch.c */
int mrmon_watch_one(struct mrmon_ctx *ctx, struct mrmon_range *r);
int mrmon_unwatch_one(struct mrmon_ctx *ctx, const struct mrmon_unwatch_entry *e);
int mrmon_revalidate_one(struct mrmon_ctx *ctx, struct mrmon_unwatch_entry *e);
void mrmon_revalidate_undo(struct mrmon_ctx *ctx, u32 slot, u64 old_expected);
void mrmon_watches_free(struct mrmon_ctx *ctx);
int mrmon_slots_alloc(struct mrmon_ctx *ctx, u32 nslots);
void mrmon_slots_free(struct mrmon_ctx *ctx);
int mrmon_watch_cache_init(void);
void mrmon_watch_cache_exit(void);

/* mrmon_snapshot.c */
void mrmon_snapshot_key_init(void);
int mrmon_snapshot(struct mrmon_watch *w, unsigned long seq, bool pinned,
		   u64 *fingerprint);

/* mrmon_notify.c */
extern const struct mmu_interval_notifier_ops mrmon_interval_ops;
bool mrmon_events_ready(struct mrmon_ctx *ctx);
bool mrmon_event_pop(struct mrmon_ctx *ctx, struct mrmon_event *ev);
void mrmon_event_unpop_lost(struct mrmon_ctx *ctx);

/* mrmon_mm.c */
struct mrmon_mm_count *mrmon_mm_get(struct mm_struct *mm);
void mrmon_mm_put(struct mrmon_mm_count *c);
int mrmon_mm_watch_add(struct mrmon_mm_count *c);
void mrmon_mm_watch_del(struct mrmon_mm_count *c);

/* mrmon_charge.c */
int mrmon_charge(struct mrmon_ctx *ctx, size_t bytes);
void mrmon_uncharge(struct mrmon_ctx *ctx, size_t bytes);
void mrmon_uncharge_all(struct mrmon_ctx *ctx);

/* mrmon_main.c: limits (module parameters; root sets them any time) */
struct mrmon_limit {
	unsigned int value;	/* READ_ONCE: a write may race */
	unsigned int ceiling;	/* even root cannot go past it */
};

extern struct mrmon_limit mrmon_max_slots, mrmon_max_events, mrmon_max_batch;
extern struct mrmon_limit mrmon_max_watches_per_mm;

static inline unsigned int mrmon_limit(const struct mrmon_limit *limit)
{
	return READ_ONCE(limit->value);
}

#endif
