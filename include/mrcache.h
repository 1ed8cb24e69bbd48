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
 *
 * The ABI can grow (docs/api.md): the structs a program hands over or
 * reads back (struct mrcache_config, struct mrcache_stats) travel with the
 * size the program was compiled with.  The inline functions below pass
 * sizeof for you; the library treats the fields a smaller (older) struct
 * lacks as 0, which is every new field's default, fills only the bytes a
 * struct has, and refuses a larger (newer) struct whose extra bytes it
 * does not know unless they are all 0 (-E2BIG), as the kernel's
 * copy_struct_from_user() does for clone3() and openat2().
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
#define MRCACHE_VERSION_MINOR	2
#define MRCACHE_VERSION_PATCH	0
#define MRCACHE_VERSION		"0.2.0"

/* The version of the library running, "MAJOR.MINOR.PATCH": the one the
 * program was built against (MRCACHE_VERSION) or, for a shared library
 * upgraded since, a later one of the same soname.  Never fails. */
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

/* Why a registration stopped matching the address space.  Causes may be
 * added, up to MRCACHE_CAUSE_MAX: struct mrcache_stats has room for them. */
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
#define MRCACHE_CAUSE_MAX	16

/* Config flags. */
#define MRCACHE_FLAG_NO_MERGE	(1u << 0) /* never widen a registration to
					     cover an overlapping request */
#define MRCACHE_FLAG_NO_ENV	(1u << 1) /* ignore MRCACHE_* variables */
#define MRCACHE_FLAG_URING_SLOTS (1u << 2) /* uring: the caller registered
					     the ring's sparse table; the
					     cache uses the slots
					     [uring_first_slot,
					     uring_first_slot + uring_slots) */
#define MRCACHE_FLAG_DISABLE	(1u << 3) /* pass-through: every get
					     registers, every last put
					     deregisters (MRCACHE_DISABLE) */
#define MRCACHE_FLAG_ALL	0xfu

/*
 * Backend flags: registration options beyond the four access bits, given
 * to mrcache_get_ex() (struct mrcache_get_attr), passed to the backend's
 * registration as they are, and part of the cache key: two gets that
 * differ in them never share a registration, except in the flags the
 * backend calls hints (callbacks: cfg.backend_flags_shared).  A flag the
 * backend does not take is -EINVAL.  Which flags a backend takes:
 *  - verbs: the optional range of enum ibv_access_flags
 *    (MRCACHE_VERBS_FLAGS: IBV_ACCESS_RELAXED_ORDERING and the later
 *    optional bits, which a device without the feature ignores); none is
 *    a hint;
 *  - uring: none;
 *  - callbacks: cfg.backend_flags, handed to cfg.reg_ex.
 */
#define MRCACHE_VERBS_FLAGS	0x3ff00000ull	/* IBV_ACCESS_OPTIONAL_RANGE */

/*
 * Callback backend: how a communication library plugs in its own
 * registration.  reg() pins [addr, addr+len) and returns an opaque handle
 * and a key (an lkey, an index...); dereg() undoes it.  Both return 0 or
 * -errno; -ENOMEM, -ENOSPC, -EAGAIN, -EMFILE and -ENFILE mean "out of
 * resources" and make the cache evict unused regions and retry; any other
 * code reaches the caller of mrcache_get() as it is, and a positive return
 * becomes -EPROTO.  Both run in the thread that called the cache (get,
 * put, invalidate, flush, progress, destroy), never inside a monitor's
 * callback or an unmapping call, with the cache's lock held: a call back
 * into the same cache returns -EDEADLK.
 */
struct mrcache_backend_ops {
	int (*reg)(void *arg, void *addr, size_t len, unsigned access,
		   void **handle, uint64_t *key);
	int (*dereg)(void *arg, void *handle);
};

/* Called after regions were invalidated, by the monitor or by hand, once
 * per region in the thread that reclaims it: the next cache call after the
 * unmapping (get, put, progress, invalidate, flush, destroy), never inside
 * the unmapping call itself.  This and on_evict run under the cache's lock
 * (calls on it give -EDEADLK). */
typedef void (*mrcache_invalidate_fn)(void *arg, uintptr_t start,
				      uintptr_t end, enum mrcache_cause cause);
/* Called when an unused region is evicted to respect the limits, in the
 * thread whose get needed the room. */
typedef void (*mrcache_evict_fn)(void *arg, uintptr_t start, uintptr_t end);
/* The same two events naming the region (cfg.on_region_invalidate,
 * cfg.on_region_evict): during the call the region is still registered
 * and mrcache_region_key(), _handle(), _rkey(), _user(), _addr() and
 * _length() read it, so a provider can revoke the key or tell its peer
 * without a map of its own.  Called after on_invalidate or on_evict when
 * both are set; same thread and lock rules.  Regions that a wider one
 * replaced (merged; MRCACHE_FLAG_NO_MERGE prevents it), flushed or
 * destroyed are not reported. */
typedef void (*mrcache_region_invalidate_fn)(void *arg, const struct mrcache_region *region,
					     enum mrcache_cause cause);
typedef void (*mrcache_region_evict_fn)(void *arg, const struct mrcache_region *region);
/* The callbacks backend's reg with backend flags (cfg.backend_flags) and
 * the region's user pointer: *user starts as the get's attr.user (NULL
 * for mrcache_get()) and what reg_ex leaves there becomes the region's.
 * Used instead of ops->reg when set; ops->dereg still deregisters. */
typedef int (*mrcache_reg_ex_fn)(void *arg, void *addr, size_t len, unsigned access,
				 uint64_t backend_flags, void **handle, uint64_t *key,
				 void **user);

/* Fields are only ever appended; 0 is every new field's default. */
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
	 * cache registers a sparse table of uring_slots entries on it.  With
	 * MRCACHE_FLAG_URING_SLOTS, the caller registered the table
	 * (io_uring_register_buffers_sparse()) and the cache fills only the
	 * slots [uring_first_slot, uring_first_slot + uring_slots). */
	struct io_uring *ring;
	unsigned uring_slots;		/* 0: 1024 */
	/* MRCACHE_BACKEND_VERBS */
	struct ibv_pd *pd;

	mrcache_invalidate_fn on_invalidate;
	mrcache_evict_fn on_evict;
	void *cb_arg;

	/* Appended in 0.2.0 (0.1.0's struct ends at cb_arg). */
	mrcache_region_invalidate_fn on_region_invalidate;	/* cb_arg */
	mrcache_region_evict_fn on_region_evict;		/* cb_arg */
	/* MRCACHE_BACKEND_CALLBACKS: reg with backend flags (ops_arg). */
	mrcache_reg_ex_fn reg_ex;
	uint64_t backend_flags;		/* the flags reg_ex takes; needs reg_ex */
	uint64_t backend_flags_shared;	/* of those, hints: gets differing
					   only in them share a registration */
	unsigned uring_first_slot;	/* MRCACHE_FLAG_URING_SLOTS */
	/* Letters and digits, at most MRCACHE_NAME_MAX; NULL: no name.  It
	 * prefixes the cache's log lines and statistics, and its variables
	 * MRCACHE_<NAME>_<VAR> override MRCACHE_<VAR> (mrcache(7)).  Copied
	 * at create; config_get returns the library's copy. */
	const char *name;
};
#define MRCACHE_NAME_MAX	32

/* The sized entry points: size is sizeof(*cfg) as the caller compiled it.
 * Use the inline functions below.
 * config_init_sized: 0, or -EINVAL when cfg is NULL or size is smaller
 * than the first struct mrcache_config (0.1.0's).
 * create_sized: see mrcache_create(); also -EINVAL for such a size, and
 * -E2BIG for a larger one with a non-zero byte this library does not know.
 * config_get_sized: see mrcache_config_get(); fills min(size, the
 * library's size) bytes, zeroes the rest, returns the bytes filled. */
int mrcache_config_init_sized(struct mrcache_config *cfg, size_t size);
int mrcache_create_sized(const struct mrcache_config *cfg, size_t size,
			 struct mrcache **out);
int mrcache_config_get_sized(struct mrcache *cache, struct mrcache_config *cfg,
			     size_t size);

/* Fill *cfg with defaults: callbacks backend, auto monitor, no limits. */
static inline void mrcache_config_init(struct mrcache_config *cfg)
{
	(void)mrcache_config_init_sized(cfg, sizeof(*cfg));
}

/*
 * Create a cache: open the backend, then start the monitor.  The
 * MRCACHE_* variables override *cfg unless cfg->flags has
 * MRCACHE_FLAG_NO_ENV; they are read here, once.
 * Errors: -EINVAL (cfg or out NULL; unknown backend, monitor or flags; the
 * backend's ops, ring or pd missing; a bad MRCACHE_* value, with a
 * message; a name not 1-32 letters and digits), -ENOMEM, the backend's:
 * -EINVAL (uring_slots above 16384; uring_first_slot without
 * MRCACHE_FLAG_URING_SLOTS, or slots past 16384 or the caller's table;
 * backend_flags without reg_ex, backend_flags_shared not among them),
 * -EBUSY (the ring already has buffers, without MRCACHE_FLAG_URING_SLOTS),
 * -ENXIO (MRCACHE_FLAG_URING_SLOTS and no table), -ENOTSUP (verbs: no libibverbs),
 * and the monitor's: -ENODEV, -EACCES (kernel: no /dev/mrmon, or not
 * allowed), -EPROTONOSUPPORT (module of another ABI), -EPERM (bpf: no
 * CAP_BPF and CAP_PERFMON; uffd: not permitted), -ENOSYS (uffd: no
 * userfaultfd), -ENOTSUP (a monitor this build or kernel lacks; hooks: the
 * interposed calls are not reached; auto: none started), -ENOSPC (hooks:
 * too many caches), or any other errno the monitor's system calls give.
 */
static inline int mrcache_create(const struct mrcache_config *cfg, struct mrcache **out)
{
	return mrcache_create_sized(cfg, sizeof(*cfg), out);
}

/* The configuration in effect: the program's, with the MRCACHE_* variables
 * applied, and `monitor` the one running (never AUTO).  Works in a forked
 * child too.  Errors: -EINVAL (cache or cfg NULL). */
static inline int mrcache_config_get(struct mrcache *cache, struct mrcache_config *cfg)
{
	int rc = mrcache_config_get_sized(cache, cfg, sizeof(*cfg));

	return rc < 0 ? rc : 0;
}

/* Stop the monitor, deregister every region, free the cache.  A forked
 * child's copy is freed without touching the parent's registrations.
 * Errors: -EINVAL (NULL), -EBUSY (regions still held: nothing freed),
 * -EDEADLK (from a callback of this cache). */
int mrcache_destroy(struct mrcache *cache);

/*
 * Return a referenced region covering [addr, addr+len) with at least
 * `access`.  The region stays registered until mrcache_put(), even if the
 * memory is unmapped meanwhile (it is then never handed out again).
 * Errors: -EINVAL (cache, addr or out NULL, len 0, the range wraps, access
 * has unknown bits), -ECHILD (cache created before a fork, called in the
 * child), -EDEADLK (from a callback of this cache), -ENOMEM, -EAGAIN (the
 * range kept being unmapped while it was registered; or the backend's,
 * nothing left to evict), -EFAULT (not mapped: uffd watch, uring), the
 * kernel monitor's -ENOSPC and -EDQUOT (watch limits), -EOPNOTSUPP (uffd:
 * a mapping it cannot watch, and hooks not linked), and the backend's:
 * -ENOSPC, -ENOMEM, -EMFILE, -ENFILE (after evicting all it could), -E2BIG
 * (uring: over 1 GiB once rounded to pages; checked before the monitor
 * watches, so under every monitor, mapped or not), -EEXIST (uring: another thread of a single-issuer
 * ring), -EPROTO (a callback returned a positive value), or any code a
 * callback or ibv_reg_mr returns.
 */
int mrcache_get(struct mrcache *cache, const void *addr, size_t len,
		unsigned access, struct mrcache_region **out);
/* What mrcache_get_ex() asks beyond mrcache_get(); fields only appended,
 * 0 their default. */
struct mrcache_get_attr {
	uint64_t backend_flags;	/* part of the cache key (see above) */
	void *user;		/* the region's user pointer, when this get
				   registers it (a miss); a hit returns the
				   region with the pointer it has */
};

/* mrcache_get() with attributes; attr NULL is mrcache_get().  Errors: as
 * for mrcache_get(); also -EINVAL (a backend flag the backend does not
 * take, attr_size smaller than the first struct mrcache_get_attr), -E2BIG
 * (a larger one with a non-zero byte this library does not know), -ENOSPC
 * (more than 255 distinct keyed flag sets in one cache). */
int mrcache_get_ex_sized(struct mrcache *cache, const void *addr, size_t len,
			 unsigned access, const struct mrcache_get_attr *attr,
			 size_t attr_size, struct mrcache_region **out);
static inline int mrcache_get_ex(struct mrcache *cache, const void *addr, size_t len,
				 unsigned access, const struct mrcache_get_attr *attr,
				 struct mrcache_region **out)
{
	return mrcache_get_ex_sized(cache, addr, len, access, attr, sizeof(*attr), out);
}

/* Drop the reference a get returned; an invalidated region is deregistered
 * at its last put.  Errors: -EINVAL, and nothing changes, when cache or
 * region is NULL or `region` is not one this cache handed out (another
 * cache's region, or no region at all) or is not held; -ECHILD, -EDEADLK
 * as for mrcache_get(). */
int mrcache_put(struct mrcache *cache, struct mrcache_region *region);

/* A region's registered range (page aligned, possibly wider than the get
 * asked for) and registration.  NULL or 0 for a NULL region; no errors. */
void *mrcache_region_addr(const struct mrcache_region *region);
size_t mrcache_region_length(const struct mrcache_region *region);
/* Backend key: io_uring buffer index, ibverbs lkey, callback key. */
uint64_t mrcache_region_key(const struct mrcache_region *region);
/* Backend handle: struct ibv_mr *, or the callback's handle. */
void *mrcache_region_handle(const struct mrcache_region *region);
/* ibverbs rkey; 0 for the other backends. */
uint32_t mrcache_region_rkey(const struct mrcache_region *region);
/* The user pointer: the registering get's attr.user, or what the
 * callbacks backend's reg_ex stored.  NULL for a NULL region. */
void *mrcache_region_user(const struct mrcache_region *region);

/* Drop every registration overlapping [addr, addr+len); returns the count.
 * Errors: -EINVAL (cache or addr NULL, len 0, the range wraps), -ECHILD,
 * -EDEADLK as for mrcache_get(). */
int mrcache_invalidate(struct mrcache *cache, const void *addr, size_t len);
/* Deregister every unused region; returns the count.
 * Errors: -EINVAL (NULL), -ECHILD, -EDEADLK. */
int mrcache_flush(struct mrcache *cache);
/* Reclaim regions invalidated by the monitor now rather than at the next
 * call; returns the count.  Safe to call from a progress loop.
 * Errors: -EINVAL (NULL), -ECHILD, -EDEADLK. */
int mrcache_progress(struct mrcache *cache);

/* Counters are only ever appended; a cause added later counts in its own
 * invalidations[] entry (entries past MRCACHE_CAUSE_COUNT_ read 0). */
struct mrcache_stats {
	uint64_t hits;			/* request equal to a cached region */
	uint64_t subrange_hits;		/* request strictly inside one */
	uint64_t misses;
	uint64_t registrations;		/* backend reg calls that succeeded */
	uint64_t registration_failures;
	uint64_t deregistrations;
	uint64_t invalidations[MRCACHE_CAUSE_MAX]; /* regions, by cause */
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

/* Fills min(size, the library's size) bytes of *stats, zeroes the rest
 * (counters a newer program knows and this library does not: 0) and
 * returns the bytes filled.  Errors as for mrcache_stats_get(). */
int mrcache_stats_get_sized(struct mrcache *cache, struct mrcache_stats *stats,
			    size_t size);

/* A snapshot of the counters.  Errors: -EINVAL (NULL), -EDEADLK. */
static inline int mrcache_stats_get(struct mrcache *cache, struct mrcache_stats *stats)
{
	int rc = mrcache_stats_get_sized(cache, stats, sizeof(*stats));

	return rc < 0 ? rc : 0;
}

/* The counters, in lines for people.  Errors: -EINVAL (NULL), -EDEADLK. */
int mrcache_stats_print(struct mrcache *cache, FILE *out);
/*
 * Messages.  Errors a user must see (MRCACHE_LOG_ERROR) go to stderr,
 * prefixed "mrcache: "; info messages (MRCACHE_LOG_INFO, also named
 * MRCACHE_LOG_DEBUG: which monitor `auto` chose and why the others could
 * not start or were not taken, the MRCACHE_* variables read) and trace
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
#define MRCACHE_LOG_INFO	1
#define MRCACHE_LOG_DEBUG	MRCACHE_LOG_INFO	/* its name in 0.1 */
#define MRCACHE_LOG_TRACE	2
typedef void (*mrcache_log_fn)(void *arg, int level, const char *msg);
int mrcache_set_log(mrcache_log_fn fn, void *arg, int level);

/* "auto", "none", "kernel", "bpf", "uffd", "hooks"; "invalid" for a value
 * outside the enum.  Never fails. */
const char *mrcache_monitor_name(enum mrcache_monitor_kind kind);
/* Parse "auto", "none", "kernel", "bpf", "uffd", "hooks", in any case;
 * -EINVAL for anything else or a NULL argument. */
int mrcache_monitor_parse(const char *name, enum mrcache_monitor_kind *out);
/* "manual", "unmap", ...; "invalid" outside the enum.  Never fails. */
const char *mrcache_cause_name(enum mrcache_cause cause);

/* The index-th MRCACHE_* variable the library reads (0, 1, ... in name
 * order): its name, its default as a user would write it, and what it
 * does, in one line; each pointer may be NULL, the strings are static.
 * For tools such as mrcache-info.  0, or -ENOENT past the last one. */
int mrcache_env_describe(unsigned index, const char **name, const char **def,
			 const char **help);

#ifdef __cplusplus
}
#endif
#endif /* MRCACHE_H */
