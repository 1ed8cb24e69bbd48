/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * mrmon.h - module-internal declarations.
 *
 * One context per open descriptor, bound to the opener's mm: one classic
 * struct mmu_notifier (registered by SETUP) and the module's own interval
 * tree of watches behind it.  Locks, outermost first:
 *
 *   ctx->mutex  (sleeping, taken killably) serialises SETUP against
 *               itself.  WATCH and UNWATCH do not take it: after SETUP
 *               everything they change is under ctx->lock.
 *   ctx->read_mutex (sleeping, taken interruptibly; trylock with
 *               O_NONBLOCK) makes read() one reader at a time: only a
 *               reader moves the ring's head, so the events it copies
 *               out with no spinlock held stay where they are.
 *   ctx->lock   (spinlock, leaf) guards the tree, the slot table (slot
 *               -> watch, the free and limbo stacks), the generation
 *               counter, the words, the header counters, the event ring,
 *               the overflow flag, the invalidations in flight
 *               (ctx->inflight, ctx->wide).  Taken by the notifier callbacks,
 *               which may be non-blockable (the OOM reaper): never held
 *               across anything that sleeps, allocates or takes mmap_lock.
 */
#ifndef MRMON_INTERNAL_H
#define MRMON_INTERNAL_H

#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <uapi/linux/mrmon.h>
#include "mrmon_probes.h"

#if BITS_PER_LONG != 64
#error "mrmon needs a 64-bit kernel: user space loads each 64-bit word in one access"
#endif

/*
 * Invalidations in flight kept exactly, per descriptor: one per thread of
 * the owner's mm that is inside an invalidation of it (the OOM reaper and
 * the reclaim of another process count too).  Eight covers the threads
 * of a process on most of its CPUs at once; beyond that the union in
 * ctx->wide is exact enough.
 */
#define MRMON_INFLIGHT	8

/*
 * One watched range, a node of its descriptor's interval tree.  Made by
 * WATCH; unlinked by UNWATCH or by the invalidation that clears its word
 * (inside the callback), then kept on ctx->dead_list for the next WATCH to
 * reuse; freed at close.
 */
struct mrmon_watch {
	union {
		struct rb_node rb;	/* in ctx->tree, under ctx->lock */
		struct mrmon_watch *dead_next;	/* on ctx->dead_list */
	};
	unsigned long start;		/* first byte */
	unsigned long last;		/* last byte (inclusive) */
	unsigned long subtree_last;	/* the tree's augmentation */
	u64 cookie;
	u64 gen;
	u32 slot;
};

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

/*
 * A descriptor's limits, read once at open from the module parameters and
 * the opener's RLIMIT_MEMLOCK and capabilities: changing a parameter never
 * changes a live descriptor.
 */
struct mrmon_limits {
	u32 max_slots, max_events, max_batch;
	u32 max_watches_per_mm;
	u64 max_span;		/* bytes the mm's watches may cover; U64_MAX: no limit */
};

struct mrmon_ctx {
	struct mmu_notifier mn;		/* registered by SETUP */
	struct mm_struct *mm;		/* the opener's; mmgrab()bed */
	struct mrmon_mm_count *mm_count;	/* its watches, all descriptors */
	struct mrmon_limits lim;	/* set at open, then immutable */
	struct mutex mutex;
	struct mutex read_mutex;	/* see the top of the file */
	spinlock_t lock;		/* see the top of the file */
	wait_queue_head_t wq;		/* readers and pollers */

	/* Set once by SETUP, then immutable; readers check setup_done
	 * with an acquire load first.
	 */
	int setup_done;
	u32 nslots, nevents;
	void *map;			/* vmalloc: header page + words */
	unsigned int npages;
	struct mrmon_header *hdr;
	u64 *words;
	struct mrmon_event *ring;

	/* Under ctx->lock.  A slot is in exactly one place: holding a live
	 * watch (slot_watch), on the free stack, in the event ring (its
	 * watch was freed by an invalidation; freed once read() has copied
	 * the event out), or in limbo (its event was lost to an overflow;
	 * freed once the OVERFLOW event has been copied out).  So a slot is
	 * never reused before user space has been told its watch is gone.
	 */
	struct rb_root_cached tree;
	struct mrmon_watch **slot_watch;	/* slot -> its watch, or NULL */
	u32 *free_slots;		/* stack of free slots */
	u32 nfree;
	u32 *limbo;			/* queue of slots whose event was lost */
	u32 limbo_head, nlimbo;		/* (a ring of nslots) */
	u64 next_gen;
	/* Invalidations in flight.  The first MRMON_INFLIGHT are kept one by
	 * one, so that a WATCH is refused only by an invalidation that
	 * overlaps it; any beyond are counted in @wide and the union of
	 * their ranges, which only widens until @wide returns to 0 (as KVM's
	 * mmu_invalidate_in_progress and mmu_invalidate_range_start/end).
	 */
	struct mrmon_span {
		unsigned long start, end;
	} inflight[MRMON_INFLIGHT];
	unsigned int ninflight;
	unsigned long wide;
	unsigned long wide_start, wide_end;
	bool dead;			/* closed: the callbacks do nothing */
	/* Watches an invalidation or UNWATCH unlinked, reused by WATCH and
	 * freed at close (mrmon_dead_free()): the callback never frees.
	 */
	struct mrmon_watch *dead_list;

	u32 ring_head, ring_count;
	bool overflow_unreported;
};

/* mrmon_ioctl.c */
long mrmon_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* mrmon_setup.c */
long mrmon_setup(struct mrmon_ctx *ctx, void __user *uarg);
void mrmon_ctx_release(struct mrmon_ctx *ctx);
void mrmon_ctx_free(struct mrmon_ctx *ctx);

/* mrmon_watch.c */
int mrmon_watch_one(struct mrmon_ctx *ctx, struct mrmon_range *r,
		    struct mrmon_watch **spare);
int mrmon_unwatch_one(struct mrmon_ctx *ctx, const struct mrmon_unwatch_entry *e);
unsigned int mrmon_watches_clear(struct mrmon_ctx *ctx, unsigned long start,
				 unsigned long end, u32 cause);
void mrmon_watches_free(struct mrmon_ctx *ctx);
void mrmon_dead_free(struct mrmon_ctx *ctx);
struct mrmon_watch *mrmon_watch_alloc(void);
void mrmon_watch_free(struct mrmon_watch *w);
int mrmon_slots_alloc(struct mrmon_ctx *ctx, u32 nslots);
void mrmon_slots_free(struct mrmon_ctx *ctx);
void mrmon_slot_put(struct mrmon_ctx *ctx, u32 slot);
void mrmon_limbo_push(struct mrmon_ctx *ctx, u32 slot);
int mrmon_watch_cache_init(void);
void mrmon_watch_cache_exit(void);

/* mrmon_notify.c */
extern const struct mmu_notifier_ops mrmon_mn_ops;
bool mrmon_events_ready(struct mrmon_ctx *ctx);
long mrmon_events_copy(struct mrmon_ctx *ctx, struct mrmon_event __user *buf, u32 max);
bool mrmon_event_push(struct mrmon_ctx *ctx, const struct mrmon_event *ev);

/* mrmon_mm.c */
struct mrmon_mm_count *mrmon_mm_get(struct mm_struct *mm);
void mrmon_mm_put(struct mrmon_mm_count *c);
int mrmon_mm_watch_add(struct mrmon_mm_count *c, const struct mrmon_limits *lim,
		       u64 span);
void mrmon_mm_watch_sub(struct mrmon_mm_count *c, unsigned long n, u64 span);

/* mrmon_main.c: limits (module parameters; root sets them any time) */
struct mrmon_limit {
	unsigned int value;	/* READ_ONCE: a write may race */
	unsigned int ceiling;	/* even root cannot go past it */
};

extern struct mrmon_limit mrmon_max_slots, mrmon_max_events, mrmon_max_batch;
extern struct mrmon_limit mrmon_max_watches_per_mm;
extern struct mrmon_limit mrmon_span_floor_mb, mrmon_max_span_per_mm_gb;

static inline unsigned int mrmon_limit(const struct mrmon_limit *limit)
{
	return READ_ONCE(limit->value);
}

#endif
