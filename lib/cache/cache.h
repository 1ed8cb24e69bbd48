/* SPDX-License-Identifier: MIT */
/* cache.h - the cache's private state, shared by lib/cache*.c. */
#ifndef MRC_CACHE_H
#define MRC_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "backend/backend.h"
#include "cache/event_ring.h"
#include "cache/index.h"
#include "cache/lru.h"
#include "monitor/monitor.h"
#include "cache/region.h"
#include "cache/slabset.h"
#include "cache/threads.h"

/* Most regions whose unwatches one reclaim_flush() hands the monitor. */
#define MRC_RECLAIM_BATCH 64
/* Hits publish in hazard slots (1) or take a reference (0): a build
 * option for measuring the difference (docs/benchmarks.md). */
#ifndef MRC_HAZARD_SLOTS
#define MRC_HAZARD_SLOTS 1
#endif

/* The distinct keyed backend flag sets one cache tells apart: a region
 * keeps its set's index (class) in end_access bits 4..11, class 0 being
 * no flags, so a hit compares it with the access bits. */
#define MRC_FLAG_CLASSES ((REGION_CLASS_BITS >> REGION_CLASS_SHIFT) + 1)

/* Allocated at its alignment (mrc_cache_create): the first line holds
 * what every hit reads and nothing writes after create, so no write of
 * the lock's fields (or of anything else) evicts it from the readers. */
struct mrcache {
	size_t page_size;
	struct mrc_index *index;
	struct mrc_monitor *monitor;
	/* monitor->ops' settle and pending (either may be NULL), copied:
	 * every get and put calls them, without the chase through ops. */
	void (*settle)(struct mrc_monitor *mon);
	int (*pending)(struct mrc_monitor *mon);
	/* What each thread writes on a hit (threads.h). */
	struct mrc_threads *threads;
	unsigned fork_generation;	/* see forked() in cache.c */
	int user_side_monitor;		/* words live in the regions */

	struct mrcache_config cfg __attribute__((aligned(64)));
	struct mrc_backend *backend;

	/* cache->lock guards: index writes, lru, the region slabs and free
	 * list, regions/bytes, the counters in `st` other than the hit
	 * counts (threads.h), and every region's flags/lru fields.  Held
	 * across backend reg/dereg and monitor watch/unwatch/drain; never taken by the hit
	 * path or by mrc_cache_unmapped().  Taken through mrc_cache_lock(),
	 * which leaves the holder's thread token in lock_owner (atomic). */
	pthread_mutex_t lock;
	const void *lock_owner;
	struct mrc_lru lru;
	struct mrc_slabset slabs;		/* adds under the lock; reads anywhere */
	struct mrcache_region *free_regions;	/* linked through cold reg.handle */
	uint64_t nregions, nbytes;
	uint64_t outstanding_uncached;
	/* Killed (invalidated, evicted...) while the application held them:
	 * out of the LRU, deregistered at their last put.  destroy waits. */
	uint64_t outstanding_dead;
	struct mrcache_stats st;
	/* Dead regions nobody references, to reclaim at the end of the lock
	 * section: those no hazard slot holds are deregistered, unwatched
	 * and freed then (cache.c: reclaim_flush); under the lock. */
	struct mrcache_region *reclaim[MRC_RECLAIM_BATCH];
	uint32_t reclaim_count;

	/* What the user-side monitors reported: pushed lock-free from any
	 * thread and signal handler, drained under the lock. */
	struct mrc_event_ring events;
	uint32_t events_waiting;	/* atomic: raised after every push */
	uint64_t unmap_seq;		/* atomic: bumped by every unmapped() */

	/* flag_class[i]: the keyed backend flags of class i (0: none).
	 * Appended under the lock, nflag_classes published with release
	 * after the entry; read without it. */
	uint64_t flag_class[MRC_FLAG_CLASSES];
	uint32_t nflag_classes;
	int disabled;			/* pass-through: nothing is cached */
	char name[MRCACHE_NAME_MAX + 1];	/* "" when unnamed */
	const char *log_name_saved;	/* the thread's log name under the lock */

	/* The LRU's clock (cache.c: region_touch): bumped under the lock
	 * by every miss and eviction, read by every put; a line of its own,
	 * so its writes evict nothing else from the readers. */
	uint64_t lru_epoch __attribute__((aligned(64)));
} __attribute__((aligned(64)));

/* cache.c */
void mrc_cache_lock(struct mrcache *c);
void mrc_cache_unlock(struct mrcache *c);
/* -EDEADLK (and a message naming fn) when this thread holds c's lock: a
 * callback calling back into its own cache.  0 otherwise. */
int mrc_cache_reentered(const struct mrcache *c, const char *fn);
/* Kill r, whose watch reported cause (cache/invalidate.c). */
void mrc_region_invalidate(struct mrcache *c, struct mrcache_region *r,
			   enum mrcache_cause cause);
int mrc_cache_drain_locked(struct mrcache *c);

/* A slot of one of this cache's slabs?  Never dereferences r: it may be
 * anything a caller passed (another cache's region, garbage).  Inline:
 * every mrcache_put asks. */
static inline int mrc_region_is_ours(const struct mrcache *c, const struct mrcache_region *r)
{
	uintptr_t off = (uintptr_t)r & (REGION_SLAB_BYTES - 1);

	return off < sizeof(((struct mrc_slab *)0)->hot) && off % sizeof(*r) == 0 &&
	       mrc_slabset_has(&c->slabs, r);
}

/* cache.c: mrcache_create() for a config of this library's size. */
int mrc_cache_create(const struct mrcache_config *cfg, struct mrcache **out);

/* config.c: check *in and apply the MRCACHE_* variables to *out; 0 or
 * -EINVAL.  The name is copied into `name` ("" for none) and out->name
 * points there.  The environment is read once, here: what MRCACHE_STATS said
 * becomes a flag of the resolved config that mrcache_destroy() obeys. */
int mrc_config_resolve(const struct mrcache_config *in, struct mrcache_config *out,
		       char name[MRCACHE_NAME_MAX + 1]);
/* The first struct mrcache_config (0.1.0's): every later one starts so. */
#define MRC_CONFIG_SIZE_VER0	(offsetof(struct mrcache_config, cb_arg) + sizeof(void *))
/* A resolved config's flag, outside MRCACHE_FLAG_ALL: print the
 * statistics at mrcache_destroy() (MRCACHE_STATS was true at create). */
#define MRC_FLAG_STATS_AT_DESTROY	(1u << 31)

#endif
