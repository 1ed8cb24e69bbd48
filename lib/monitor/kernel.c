/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/kernel.c - the `kernel` monitor: /dev/mrmon (kmod/, docs/abi.md).
 *
 * The module keeps one word per watch in memory mapped read-only here and
 * clears it inside the unmapping call, so the hit path's check is one
 * acquire load of *w->word.  WATCH arms a watch only when no invalidation
 * of the range is in flight and otherwise answers "not armed" (expected
 * 0): kernel_watch() then tries again, so it returns only when no
 * invalidation of the range is in progress, which makes the cache's watch,
 * register, re-check race-free.  drain() reads the module's event queue
 * and reports each invalidated watch with mrc_cache_event(); a lost event
 * (queue overflow) makes it call mrc_cache_rescan(), which checks every
 * word.
 *
 * The module frees a watch in the callback that clears its word (ABI 3):
 * a word that no longer equals w->expected means the watch is gone, and
 * unwatch() makes no system call for it.  The slot comes back to the
 * module's free list only when read() hands its event over, so an event
 * always finds its own watch in slots[].
 *
 * A forked child inherits the descriptor but may not use it (the module
 * answers -EPERM) and would keep the parent's kernel context alive for
 * its whole life: the atfork child handler closes every descriptor.
 *
 * Threads: watch, unwatch and drain run under cache->lock
 * (which also guards slots[]); pending() is one load, from any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uapi/linux/mrmon.h>
#include "cache/cache.h"
#include "monitor/monitor.h"

#define KMON_DEV		"/dev/mrmon"
#define KMON_DEFAULT_SLOTS	65536u
#define KMON_EVENTS		4096u
#define KMON_READ_BATCH		256

struct kernel_monitor {
	struct mrc_monitor base;
	struct kernel_monitor *next, *prev;	/* kmon_all, under kmon_all_lock */
	int fd;
	void *map;
	size_t map_size;
	const struct mrmon_header *hdr;
	const uint64_t *words;
	uint32_t nslots;
	uint32_t max_batch;
	/* The live watch of each slot and its generation (0 when none):
	 * events of a watch already removed are dropped. */
	struct kmon_slot {
		uint64_t gen;
		struct mrc_watch *w;
	} *slots;
	size_t slots_size;
};

static enum mrcache_cause kmon_cause(uint32_t cause)
{
	switch (cause) {
	case MRMON_CAUSE_UNMAP:
		return MRCACHE_CAUSE_UNMAP;
	case MRMON_CAUSE_CLEAR:
		return MRCACHE_CAUSE_DISCARD;
	case MRMON_CAUSE_RELEASE:
		return MRCACHE_CAUSE_EXIT;
	default:
		return MRCACHE_CAUSE_OTHER;
	}
}

/* A signal can interrupt the first WATCH of a process while the kernel
 * sets up the mm's notifier list (EINTR): that is transient, never a
 * reason to give up on the monitor. */
static int kmon_ioctl(int fd, unsigned long cmd, void *arg)
{
	int rc;

	do
		rc = ioctl(fd, cmd, arg) < 0 ? -errno : 0;
	while (rc == -EINTR);
	return rc;
}

/* Every live monitor, so that a forked child can close their descriptors. */
static struct kernel_monitor kmon_all = { .next = &kmon_all, .prev = &kmon_all };
static pthread_mutex_t kmon_all_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t kmon_atfork_once = PTHREAD_ONCE_INIT;

static void kmon_fork_prepare(void)
{
	pthread_mutex_lock(&kmon_all_lock);
}

static void kmon_fork_parent(void)
{
	pthread_mutex_unlock(&kmon_all_lock);
}

static void kmon_fork_child(void)
{
	for (struct kernel_monitor *km = kmon_all.next; km != &kmon_all; km = km->next) {
		close(km->fd);
		km->fd = -1;
	}
	pthread_mutex_unlock(&kmon_all_lock);
}

static void kmon_atfork_install(void)
{
	pthread_atfork(kmon_fork_prepare, kmon_fork_parent, kmon_fork_child);
}

static void kmon_list_add(struct kernel_monitor *km)
{
	pthread_once(&kmon_atfork_once, kmon_atfork_install);
	pthread_mutex_lock(&kmon_all_lock);
	km->next = kmon_all.next;
	km->prev = &kmon_all;
	kmon_all.next->prev = km;
	kmon_all.next = km;
	pthread_mutex_unlock(&kmon_all_lock);
}

static void kmon_list_del(struct kernel_monitor *km)
{
	pthread_mutex_lock(&kmon_all_lock);
	km->prev->next = km->next;
	km->next->prev = km->prev;
	pthread_mutex_unlock(&kmon_all_lock);
}

static uint32_t kmon_slots_wanted(const struct mrcache *cache, uint32_t max)
{
	/* Room for the regions, plus the slots of invalidated watches whose
	 * events are queued and not read yet. */
	size_t want = cache->cfg.max_regions ? cache->cfg.max_regions + KMON_EVENTS + 64
					     : KMON_DEFAULT_SLOTS;

	return want < max ? (uint32_t)want : max;
}

static void kernel_stop(struct mrc_monitor *mon)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;

	if (km->next)
		kmon_list_del(km);
	if (km->map)
		munmap(km->map, km->map_size);
	if (km->fd >= 0)
		close(km->fd);
	if (km->slots)
		munmap(km->slots, km->slots_size);
	free(km);
}

static int kernel_open(struct kernel_monitor *km, struct mrcache *cache)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_setup su = { 0 };
	int rc;

	km->fd = open(KMON_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (km->fd < 0) {
		rc = -errno;
		mrc_log(1, "monitor kernel: %s: %s (is the mrmon module loaded?)",
			KMON_DEV, strerror(-rc));
		return rc == -ENOENT ? -ENODEV : rc;
	}
	rc = kmon_ioctl(km->fd, MRMON_IOC_HANDSHAKE, &hs);
	if (rc) {
		mrc_log(0, "monitor kernel: handshake failed: %s (module ABI %u, library %u)",
			strerror(-rc), hs.abi_version, MRMON_ABI_VERSION);
		return rc;
	}
	su.nslots = kmon_slots_wanted(cache, hs.max_slots);
	su.nevents = KMON_EVENTS < hs.max_events ? KMON_EVENTS : hs.max_events;
	rc = kmon_ioctl(km->fd, MRMON_IOC_SETUP, &su);
	if (rc) {
		mrc_log(0, "monitor kernel: setup of %u slots failed: %s", su.nslots, strerror(-rc));
		return rc;
	}
	km->map_size = su.map_size;
	km->map = mmap(NULL, su.map_size, PROT_READ, MAP_SHARED, km->fd, 0);
	if (km->map == MAP_FAILED) {
		km->map = NULL;
		rc = -errno;
		mrc_log(0, "monitor kernel: mmap: %s", strerror(-rc));
		return rc;
	}
	km->hdr = km->map;
	km->words = (const uint64_t *)((const char *)km->map + hs.header_size);
	km->nslots = su.nslots;
	km->max_batch = hs.max_batch ? hs.max_batch : 1;
	/* 1 MiB for the default 65,536 slots: from malloc, its free() at
	 * stop would raise glibc's dynamic mmap threshold, and the program's
	 * own large mallocs would come from the heap after that (the library
	 * must not change the application's allocator state). */
	km->slots_size = su.nslots * sizeof(*km->slots);
	km->slots = mmap(NULL, km->slots_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (km->slots == MAP_FAILED) {
		km->slots = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int kernel_start(struct mrcache *cache, struct mrc_monitor **out)
{
	struct kernel_monitor *km = calloc(1, sizeof(*km));
	int rc;

	if (!km)
		return -ENOMEM;
	km->fd = -1;
	rc = kernel_open(km, cache);
	if (!rc)
		kmon_list_add(km);
	if (rc) {
		kernel_stop(&km->base);
		return rc;
	}
	*out = &km->base;
	return 0;
}

static int kernel_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
			uint64_t cookie, struct mrc_watch *w)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;
	struct mrmon_range r;
	int rc;

	/* Not armed (expected 0): an invalidation of the range is in
	 * flight; it ends without waiting for anything of ours. */
	for (;;) {
		struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };

		r = (struct mrmon_range){ .start = start, .len = end - start, .cookie = cookie };
		rc = kmon_ioctl(km->fd, MRMON_IOC_WATCH, &b);
		if (rc)
			return rc;
		if (r.expected)
			break;
		sched_yield();
	}
	w->word = &km->words[r.slot];
	w->expected = r.expected;
	w->token = r.slot;
	km->slots[r.slot] = (struct kmon_slot){ r.expected >> 1, w };
	return 0;
}

/* One UNWATCH ioctl for n <= max_batch entries.  The module processes
 * them in order and stops at one that fails (done = its index): go on
 * after it; -ESTALE (an invalidation freed the watch after the caller
 * looked at its word) is expected and silent.  An error of the call
 * itself (a closed descriptor in a forked child) is reported once. */
static void kmon_unwatch_entries(struct kernel_monitor *km, struct mrmon_unwatch_entry *e,
				 uint32_t n)
{
	while (n) {
		struct mrmon_batch b = { .entries = (uintptr_t)e, .count = n };
		int rc = kmon_ioctl(km->fd, MRMON_IOC_UNWATCH, &b);

		if (!rc)
			return;
		if ((rc != -ESTALE && rc != -EINVAL) || b.done >= n) {
			mrc_log(0, "monitor kernel: unwatch of %u slots: %s", n, strerror(-rc));
			return;
		}
		if (rc != -ESTALE)
			mrc_log(0, "monitor kernel: unwatch of slot %u: %s", e[b.done].slot,
				strerror(-rc));
		e += b.done + 1;
		n -= b.done + 1;
	}
}

/* Reclaim hands over its unwatches in batches: one ioctl per max_batch,
 * and none at all for watches the module already freed (word cleared). */
static void kernel_unwatch_many(struct mrc_monitor *mon, struct mrc_watch *const *w, unsigned n)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;
	struct mrmon_unwatch_entry e[MRC_RECLAIM_BATCH];
	uint32_t k = 0;

	for (unsigned i = 0; i < n; i++) {
		uint32_t slot = (uint32_t)w[i]->token;

		/* The slot may hold a newer watch by now: leave that one. */
		if (km->slots[slot].w == w[i])
			km->slots[slot] = (struct kmon_slot){ 0, NULL };
		if (__atomic_load_n(w[i]->word, __ATOMIC_ACQUIRE) != w[i]->expected)
			continue;
		e[k++] = (struct mrmon_unwatch_entry){ .slot = slot, .expected = w[i]->expected };
		if (k == km->max_batch || k == MRC_RECLAIM_BATCH) {
			kmon_unwatch_entries(km, e, k);
			k = 0;
		}
	}
	if (k)
		kmon_unwatch_entries(km, e, k);
}

static void kernel_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	kernel_unwatch_many(mon, &w, 1);
}

static int kmon_event_live(const struct kernel_monitor *km, const struct mrmon_event *ev)
{
	return ev->slot < km->nslots && km->slots[ev->slot].gen == ev->generation;
}

static int kernel_pending(struct mrc_monitor *mon)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;

	return __atomic_load_n(&km->hdr->pending, __ATOMIC_RELAXED) != 0;
}

/* The module keeps hdr->pending equal to what read() would return now
 * (under its lock): with nothing pending, a read would only say EAGAIN,
 * so every miss and put skips the system call. */
static int kernel_drain(struct mrc_monitor *mon)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;
	struct mrmon_event ev[KMON_READ_BATCH];
	int reported = 0;
	ssize_t got = 0;

	while (kernel_pending(mon) && (got = read(km->fd, ev, sizeof(ev))) > 0) {
		size_t n = (size_t)got / sizeof(ev[0]);

		for (size_t i = 0; i < n; i++) {
			if (ev[i].cause == MRMON_CAUSE_OVERFLOW) {
				mrc_cache_rescan(mon->cache);
				reported++;
			} else if (kmon_event_live(km, &ev[i])) {
				mrc_cache_event(mon->cache, ev[i].cookie, ev[i].start,
						ev[i].end, kmon_cause(ev[i].cause));
				reported++;
			}
		}
		if ((size_t)got < sizeof(ev))
			break;
	}
	if (got < 0 && errno != EAGAIN)
		mrc_log(0, "monitor kernel: reading events: %s", strerror(errno));
	return reported;
}

const struct mrc_monitor_ops mrc_monitor_kernel_ops = {
	.kind = MRCACHE_MONITOR_KERNEL,
	.name = "kernel",
	.start = kernel_start,
	.stop = kernel_stop,
	.watch = kernel_watch,
	.unwatch = kernel_unwatch,
	.unwatch_many = kernel_unwatch_many,
	.drain = kernel_drain,
	.pending = kernel_pending,
};
