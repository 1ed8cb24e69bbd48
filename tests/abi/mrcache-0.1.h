/* SPDX-License-Identifier: MIT */
/*
 * mrcache.h - a memory-registration cache that cannot go stale.
 *
 * A cache of DMA registrations (io_uring fixed buffers, ibverbs memory
 * regions, or anything a callback pins) keyed by virtual address range.
 * A VM-activity monitor tells the cache, before an unmapping call returns,
 * which registrations no longer match the address space; such regions are
 * never handed out again.
 *
 * Conventions: every function returns 0 (or a count) on success and a
 * negative errno on failure; errno itself is not part of the contract.
 * Any function may be called from any thread, but not from inside one of
 * the cache's own callbacks (backend reg and dereg, on_invalidate,
 * on_evict): they run with the cache's lock held, and every call on the
 * same cache from there (get, put, invalidate, flush, progress, destroy,
 * stats_get/print) returns -EDEADLK and does nothing.  Another cache may
 * be used from a callback.
 */
#ifndef MRCACHE_H
#define MRCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header.  The Makefile's VERSION is the one source:
 * these must agree with `make print-version` (tests/test-version.c). */
#define MRCACHE_VERSION_MAJOR	0
#define MRCACHE_VERSION_MINOR	1
#define MRCACHE_VERSION_PATCH	0
#define MRCACHE_VERSION		"0.1.0"

/* The version of the library running, "MAJOR.MINOR.PATCH": the one the
 * program was built against (MRCACHE_VERSION) or, for a shared library
 * upgraded since, a later one of the same soname. */
const char *mrcache_version(void);

struct mrcache;
struct mrcache_region;
struct io_uring;
struct ibv_pd;

/* Access a registration must allow; mirrors enum ibv_access_flags. */
#define MRCACHE_ACCESS_LOCAL_WRITE	(1u << 0)
#define MRCACHE_ACCESS_REMOTE_WRITE	(1u << 1)
#define MRCACHE_ACCESS_REMOTE_READ	(1u << 2)
#define MRCACHE_ACCESS_REMOTE_ATOMIC	(1u << 3)
#define MRCACHE_ACCESS_ALL		0xfu

enum mrcache_backend_kind {
	MRCACHE_BACKEND_CALLBACKS = 1,	/* struct mrcache_backend_ops */
	MRCACHE_BACKEND_URING = 2,	/* io_uring fixed buffers */
	MRCACHE_BACKEND_VERBS = 3,	/* ibv_reg_mr on a caller's PD */
};

enum mrcache_monitor_kind {
	MRCACHE_MONITOR_AUTO = 0,	/* kernel, bpf, uffd, hooks: first that starts */
	MRCACHE_MONITOR_NONE = 1,	/* manual mrcache_invalidate() only */
	MRCACHE_MONITOR_KERNEL = 2,	/* /dev/mrmon */
	MRCACHE_MONITOR_BPF = 3,	/* eBPF programs, no module */
	MRCACHE_MONITOR_UFFD = 4,	/* userfaultfd events */
	MRCACHE_MONITOR_HOOKS = 5,	/* interposed unmapping calls */
	MRCACHE_MONITOR_COUNT_
};

/* Why a registration stopped matching the address space. */
enum mrcache_cause {
	MRCACHE_CAUSE_MANUAL = 0,	/* mrcache_invalidate() */
	MRCACHE_CAUSE_UNMAP = 1,	/* munmap, MAP_FIXED over, shmdt, brk shrink */
	MRCACHE_CAUSE_REMAP = 2,	/* mremap */
	MRCACHE_CAUSE_DISCARD = 3,	/* madvise DONTNEED/FREE/REMOVE */
	MRCACHE_CAUSE_EXIT = 4,		/* the address space is going away */
	MRCACHE_CAUSE_OVERFLOW = 5,	/* event queue overflowed; found by rescan */
	MRCACHE_CAUSE_OTHER = 6,	/* anything else the monitor could not name */
	MRCACHE_CAUSE_COUNT_
};

/* Config flags. */
#define MRCACHE_FLAG_NO_MERGE	(1u << 0) /* never widen a registration to
					     cover an overlapping request */
#define MRCACHE_FLAG_NO_ENV	(1u << 1) /* ignore MRCACHE_* variables */
#define MRCACHE_FLAG_ALL	0x3u

/*
 * Callback backend: how a communication library plugs in its own
 * registration.  reg() pins [addr, addr+len) and returns an opaque handle
 * and a key (an lkey, an index...); dereg() undoes it.  Both return 0 or
 * -errno; -ENOMEM, -ENOSPC and -EAGAIN mean "out of resources" and make
 * the cache evict unused regions and retry.  Both run under the cache's
 * lock: a call back into the same cache returns -EDEADLK.
 */
struct mrcache_backend_ops {
	int (*reg)(void *arg, void *addr, size_t len, unsigned access,
		   void **handle, uint64_t *key);
	int (*dereg)(void *arg, void *handle);
};

/* Called after regions were invalidated by the monitor or by hand.  This
 * and on_evict run under the cache's lock (calls on it give -EDEADLK). */
typedef void (*mrcache_invalidate_fn)(void *arg, uintptr_t start,
				      uintptr_t end, enum mrcache_cause cause);
/* Called when an unused region is evicted to respect the limits. */
typedef void (*mrcache_evict_fn)(void *arg, uintptr_t start, uintptr_t end);

struct mrcache_config {
	enum mrcache_backend_kind backend;
	enum mrcache_monitor_kind monitor;
	size_t max_regions;		/* 0: unlimited */
	size_t max_bytes;		/* 0: unlimited */
	unsigned flags;			/* MRCACHE_FLAG_* */

	/* MRCACHE_BACKEND_CALLBACKS */
	const struct mrcache_backend_ops *ops;
	void *ops_arg;
	/* MRCACHE_BACKEND_URING: a ring with no buffers registered yet; the
	 * cache registers a sparse table of uring_slots entries on it. */
	struct io_uring *ring;
	unsigned uring_slots;		/* 0: 1024 */
	/* MRCACHE_BACKEND_VERBS */
	struct ibv_pd *pd;

	mrcache_invalidate_fn on_invalidate;
	mrcache_evict_fn on_evict;
	void *cb_arg;
};

/* Fill *cfg with defaults: callbacks backend, auto monitor, no limits. */
void mrcache_config_init(struct mrcache_config *cfg);

int mrcache_create(const struct mrcache_config *cfg, struct mrcache **out);
/* -EBUSY (and nothing freed) while regions are still referenced. */
int mrcache_destroy(struct mrcache *cache);

/*
 * Return a referenced region covering [addr, addr+len) with at least
 * `access`.  The region stays registered until mrcache_put(), even if the
 * memory is unmapped meanwhile (it is then never handed out again).
 */
int mrcache_get(struct mrcache *cache, const void *addr, size_t len,
		unsigned access, struct mrcache_region **out);
/* Drop the reference a get returned.  -EINVAL, and nothing changes, when
 * `region` is not one this cache handed out (another cache's region, or
 * no region at all) or is not held. */
int mrcache_put(struct mrcache *cache, struct mrcache_region *region);

void *mrcache_region_addr(const struct mrcache_region *region);
size_t mrcache_region_length(const struct mrcache_region *region);
/* Backend key: io_uring buffer index, ibverbs lkey, callback key. */
uint64_t mrcache_region_key(const struct mrcache_region *region);
/* Backend handle: struct ibv_mr *, or the callback's handle. */
void *mrcache_region_handle(const struct mrcache_region *region);
uint32_t mrcache_region_rkey(const struct mrcache_region *region);

/* Drop every registration overlapping [addr, addr+len); returns the count. */
int mrcache_invalidate(struct mrcache *cache, const void *addr, size_t len);
/* Deregister every unused region; returns the count. */
int mrcache_flush(struct mrcache *cache);
/* Reclaim regions invalidated by the monitor now rather than at the next
 * call; returns the count.  Safe to call from a progress loop. */
int mrcache_progress(struct mrcache *cache);

struct mrcache_stats {
	uint64_t hits;			/* request equal to a cached region */
	uint64_t subrange_hits;		/* request strictly inside one */
	uint64_t misses;
	uint64_t registrations;		/* backend reg calls that succeeded */
	uint64_t registration_failures;
	uint64_t deregistrations;
	uint64_t invalidations[MRCACHE_CAUSE_COUNT_]; /* regions, by cause */
	uint64_t evictions;
	uint64_t uncached;		/* handed out uncached: all in use */
	uint64_t merges;		/* regions widened over a neighbour */
	uint64_t retries;		/* re-registrations after a race */
	uint64_t regions;		/* current */
	uint64_t bytes;			/* current */
	uint64_t register_ns;		/* time inside backend reg */
	uint64_t deregister_ns;		/* time inside backend dereg */
	enum mrcache_monitor_kind monitor; /* the monitor in use */
};

int mrcache_stats_get(struct mrcache *cache, struct mrcache_stats *stats);
int mrcache_stats_print(struct mrcache *cache, FILE *out);

/*
 * Messages.  Errors a user must see (MRCACHE_LOG_ERROR) go to stderr,
 * prefixed "mrcache: "; debug messages (which monitor `auto` chose and why
 * the others could not start, the MRCACHE_* variables read) and trace
 * messages (libbpf's, every refused registration) only when asked for.
 *
 * mrcache_set_log() routes every message to fn instead (NULL: back to
 * stderr) and sets the most verbose level delivered, for the whole process
 * and every cache.  fn gets the message without prefix or newline, in
 * whichever thread it arises (a caller's, a monitor's handler thread),
 * possibly with the library's locks held: it must not call into the
 * library.  MRCACHE_LOG_LEVEL, or MRCACHE_DEBUG=1 for level 1, overrides
 * `level`, as the environment overrides struct mrcache_config; they are
 * read at the first message.  Returns 0, or -EINVAL for a level outside
 * MRCACHE_LOG_ERROR..MRCACHE_LOG_TRACE (nothing changes then).
 */
#define MRCACHE_LOG_ERROR	0
#define MRCACHE_LOG_DEBUG	1
#define MRCACHE_LOG_TRACE	2
typedef void (*mrcache_log_fn)(void *arg, int level, const char *msg);
int mrcache_set_log(mrcache_log_fn fn, void *arg, int level);

const char *mrcache_monitor_name(enum mrcache_monitor_kind kind);
/* Parse "auto", "none", "kernel", "bpf", "uffd", "hooks"; -EINVAL else. */
int mrcache_monitor_parse(const char *name, enum mrcache_monitor_kind *out);
const char *mrcache_cause_name(enum mrcache_cause cause);

#ifdef __cplusplus
}
#endif
#endif /* MRCACHE_H */
