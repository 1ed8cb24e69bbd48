/* SPDX-License-Identifier: MIT */
/*
 * monitor.h - the contract between the cache and a VM-activity monitor.
 *
 * A monitor hands the cache, for every watched range, a word and the value
 * that word holds while the range is untouched (struct mrc_watch).  The hit
 * path compares the two with one acquire load; the monitor changes the word
 * before the unmapping call returns.  The protocol (docs/protocol.md):
 *
 *   cache (miss, under cache->lock)         monitor
 *   -------------------------------         -------
 *   watch(range)  -> word, expected         range now watched; returns only
 *                                           when no invalidation of it is in
 *                                           progress
 *   backend reg(range)                      ... an unmap here changes word
 *   if (load_acquire(word) != expected)
 *       dereg, unwatch, retry
 *   publish region
 *
 * Monitors come in two families:
 *  - kernel-side (kernel module, bpf): the word lives in memory the kernel
 *    writes; drain() reads the monitor's event queue and reports each
 *    invalidated watch with mrc_cache_event().
 *  - user-side (uffd, hooks, none): the word is w->local, inside the region;
 *    the monitor learns of an unmapped range in the unmapping thread (or its
 *    handler thread) and calls mrc_cache_unmapped(), which clears the words
 *    of every region in the range and queues the range for reclaim.  It
 *    takes no lock and allocates nothing, so it is safe from inside free(),
 *    munmap() hooks, the cache's own calls and signal handlers.
 */
#ifndef MRC_MONITOR_H
#define MRC_MONITOR_H

#include <stdint.h>
#include "mrcache.h"

/* Word encoding shared by every monitor (and by the mrmon ABI):
 * generation << 1 | valid.  A slot reused for a new watch gets a new
 * generation, so a stale expected value never matches again. */
#define MRC_WORD_VALID		1ull
#define MRC_WORD(gen)		(((uint64_t)(gen) << 1) | MRC_WORD_VALID)

struct mrc_watch {
	uint64_t local;		/* the word, for user-side monitors */
	const uint64_t *word;	/* what the hit path loads */
	uint64_t expected;	/* word value while the range is intact */
	uint64_t token;		/* monitor's own id (kernel: slot) */
};

struct mrc_monitor;

struct mrc_monitor_ops {
	enum mrcache_monitor_kind kind;
	const char *name;
	/* -errno and a message through mrc_log() when it cannot run here. */
	int (*start)(struct mrcache *cache, struct mrc_monitor **out);
	void (*stop)(struct mrc_monitor *mon);
	/* [start, end) is page aligned.  Fills *w.  cookie comes back in
	 * mrc_cache_event().  Returns only when no invalidation of the range
	 * is in progress. */
	int (*watch)(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		     uint64_t cookie, struct mrc_watch *w);
	void (*unwatch)(struct mrc_monitor *mon, struct mrc_watch *w);
	/* unwatch() of n watches (1..MRC_RECLAIM_BATCH) in one go, for
	 * monitors where each costs a system call or a lock.  May be NULL. */
	void (*unwatch_many)(struct mrc_monitor *mon, struct mrc_watch *const *w,
			     unsigned n);
	/* Report queued invalidations with mrc_cache_event(); on a queue
	 * overflow call mrc_cache_rescan().  Returns the number reported.
	 * Called under cache->lock.  May be NULL (user-side monitors). */
	int (*drain)(struct mrc_monitor *mon);
	/* Nonzero when drain() has work; one load, called on the hit path.
	 * May be NULL. */
	int (*pending)(struct mrc_monitor *mon);
	/* User-side monitors whose report can lag behind the unmapping call
	 * returning (uffd: the kernel releases the unmapping thread when the
	 * handler reads the event, before it reports it): wait until what
	 * was read is reported.  Called at the start of every get; one load
	 * when nothing lags.  May be NULL. */
	void (*settle)(struct mrc_monitor *mon);
};

struct mrc_monitor {
	const struct mrc_monitor_ops *ops;
	struct mrcache *cache;
};

extern const struct mrc_monitor_ops mrc_monitor_none_ops;
extern const struct mrc_monitor_ops mrc_monitor_kernel_ops;
extern const struct mrc_monitor_ops mrc_monitor_bpf_ops;
extern const struct mrc_monitor_ops mrc_monitor_uffd_ops;
extern const struct mrc_monitor_ops mrc_monitor_hooks_ops;

/* Start the monitor `kind` (AUTO tries kernel, bpf, uffd, hooks). */
int mrc_monitor_start(struct mrcache *cache, enum mrcache_monitor_kind kind,
		      struct mrc_monitor **out);

/* --- What the cache offers monitors (lib/cache/invalidate.c) --- */

/* Kernel-side: the watch reported by drain() changed.  cookie is the one
 * given to watch(). Under cache->lock. */
void mrc_cache_event(struct mrcache *cache, uint64_t cookie,
		     uintptr_t start, uintptr_t end, enum mrcache_cause cause);
/* Events were lost: check every region's word.  Under cache->lock. */
void mrc_cache_rescan(struct mrcache *cache);
/* User-side: [start, end) no longer maps what it did.  Lock-free, no
 * allocation, callable from any thread, from inside the cache's own calls
 * and from a signal handler that interrupted either; regions overlapping
 * the range stop hitting before it returns. */
void mrc_cache_unmapped(struct mrcache *cache, uintptr_t start, uintptr_t end,
			enum mrcache_cause cause);

/* Diagnostics to stderr when MRCACHE_DEBUG is set, and always for errors
 * a user must see (level 0). */
void mrc_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
