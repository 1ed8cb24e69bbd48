/* SPDX-License-Identifier: MIT */
/*
 * hooks_fanout.h - the caches a process-wide user-side monitor reports to.
 *
 * The hooks and uffd monitors each see every unmapping in the process once,
 * and every cache using that monitor must hear of it.  A fanout is a fixed
 * table of cache pointers that notifiers read without a lock: a notifier
 * marks the slot busy, re-reads the pointer and calls mrc_cache_unmapped();
 * removing a cache clears the pointer, then waits until no notifier is
 * inside the slot, so mrcache_destroy() never frees a cache under a
 * notifier.  Nothing here allocates or blocks, so it is safe inside free(),
 * munmap() and the cache's own calls.
 */
#ifndef MRC_HOOKS_FANOUT_H
#define MRC_HOOKS_FANOUT_H

#include <stdint.h>
#include "monitor/monitor.h"

#define HOOKS_FANOUT_SLOTS 64

struct hooks_fanout {
	struct mrcache *cache[HOOKS_FANOUT_SLOTS];	/* atomic */
	uint32_t busy[HOOKS_FANOUT_SLOTS];		/* atomic: notifiers inside */
	uint32_t used;		/* atomic: slots below this may be set */
	uint32_t active;	/* atomic: caches in the table */
};

/* Returns the slot (>= 0) or -ENOSPC. */
int hooks_fanout_add(struct hooks_fanout *f, struct mrcache *cache);
/* Waits until no notifier uses the slot's cache any more.  Does nothing
 * if the slot no longer holds `cache` (the table was reset in a child). */
void hooks_fanout_remove(struct hooks_fanout *f, int slot, struct mrcache *cache);
/* Tell every cache in the table; [start, end) need not be page aligned. */
void hooks_fanout_unmapped(struct hooks_fanout *f, uintptr_t start,
			   uintptr_t end, enum mrcache_cause cause);

static inline int hooks_fanout_active(const struct hooks_fanout *f)
{
	return __atomic_load_n(&f->active, __ATOMIC_ACQUIRE) != 0;
}

#endif
