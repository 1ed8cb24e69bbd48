/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/kernel.c - the `kernel` monitor: /dev/mrmon (kmod/, docs/abi.md).
 *
 * The module keeps one word per watch in memory mapped read-only here and
 * clears it inside the unmapping call, so the hit path's check is one
 * acquire load of *w->word.  WATCH returns only when no invalidation of the
 * range is in progress, which makes the cache's watch, register, re-check
 * race-free.  drain() reads the module's event queue and reports each
 * invalidated watch with mrc_cache_event(); a lost event (queue overflow)
 * makes it call mrc_cache_rescan(), which checks every word.
 *
 * A CLEAR is often harmless (a VMA or huge-page split in the same 2 MiB
 * window leaves the pages where they were); the module clears the word
 * anyway.  drain() asks it to re-arm the watches of the CLEAR events it
 * reads, in one REVALIDATE batch per read, and the module does so for each
 * whose pages are still the ones WATCH saw (MRMON_RANGE_SNAPSHOT): the
 * region keeps its registration, for a share of one ioctl instead of a
 * deregistration and a registration.  Only the others reach the cache.
 *
 * A forked child inherits the descriptor but may not use it (the module
 * answers -EPERM) and would keep the parent's kernel context alive for
 * its whole life: the atfork child handler closes every descriptor.
 *
 * Threads: watch, unwatch, revalidate and drain run under cache->lock
 * (which also guards slots[]); pending() is one load, from any thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
	uint32_t range_flags;		/* MRMON_RANGE_SNAPSHOT when offered */
	void *map;
	size_t map_size;
	const struct mrmon_header *hdr;
	const uint64_t *words;
	uint32_t nslots;
	uint32_t max_batch;
	/* The live watch of each slot and its generation (0 when none):
	 * events of a watch already removed or re-armed are dropped. */
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
	size_t want = cache->cfg.max_regions ? cache->cfg.max_regions + 64 : KMON_DEFAULT_SLOTS;

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
	if (hs.features & MRMON_FEATURE_REVALIDATE)
		km->range_flags = MRMON_RANGE_SNAPSHOT;
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
	struct mrmon_range r = {
		.start = start, .len = end - start, .cookie = cookie, .flags = km->range_flags,
	};
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	int rc = kmon_ioctl(km->fd, MRMON_IOC_WATCH, &b);

	if (rc)
		return rc;
	w->word = &km->words[r.slot];
	w->expected = r.expected;
	w->token = r.slot;
	km->slots[r.slot] = (struct kmon_slot){ r.expected >> 1, w };
	return 0;
}

/* One UNWATCH ioctl for n <= max_batch entries.  The module processes
 * them in order and stops at one that fails (done = its index): report
 * it and go on after it.  An error of the call itself (a closed
 * descriptor in a forked child) is reported once. */
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
		mrc_log(0, "monitor kernel: unwatch of slot %u: %s", e[b.done].slot, strerror(-rc));
		e += b.done + 1;
		n -= b.done + 1;
	}
}

/* Reclaim hands over its unwatches in batches: one ioctl per max_batch. */
static void kernel_unwatch_many(struct mrc_monitor *mon, struct mrc_watch *const *w, unsigned n)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;
	struct mrmon_unwatch_entry e[MRC_RECLAIM_BATCH];

	while (n) {
		uint32_t k = n < km->max_batch ? n : km->max_batch;

		for (uint32_t i = 0; i < k; i++)
			e[i] = (struct mrmon_unwatch_entry){
				.slot = (uint32_t)w[i]->token, .expected = w[i]->expected,
			};
		kmon_unwatch_entries(km, e, k);
		for (uint32_t i = 0; i < k; i++)
			km->slots[e[i].slot] = (struct kmon_slot){ 0, NULL };
		w += k;
		n -= k;
	}
}

static void kernel_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	kernel_unwatch_many(mon, &w, 1);
}

/* A re-armed watch: its new word.  Events of the old generation still
 * queued no longer match and are dropped. */
static void kmon_rearmed(struct kernel_monitor *km, uint32_t slot, uint64_t expected)
{
	km->slots[slot].gen = expected >> 1;
	__atomic_store_n(&km->slots[slot].w->expected, expected, __ATOMIC_RELAXED);
}

static int kernel_revalidate(struct mrc_monitor *mon, struct mrc_watch *w)
{
	struct kernel_monitor *km = (struct kernel_monitor *)mon;
	struct mrmon_unwatch_entry e = { .slot = (uint32_t)w->token, .expected = w->expected };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };

	if (!km->range_flags || kmon_ioctl(km->fd, MRMON_IOC_REVALIDATE, &b) || !e.expected)
		return 0;
	kmon_rearmed(km, e.slot, e.expected);
	return 1;
}

static int kmon_event_live(const struct kernel_monitor *km, const struct mrmon_event *ev)
{
	return ev->slot < km->nslots && km->slots[ev->slot].gen == ev->generation;
}

/* One REVALIDATE batch for the CLEARs among n events, each slot once. */
static void kmon_revalidate_events(struct kernel_monitor *km, const struct mrmon_event *ev,
				   size_t n)
{
	struct mrmon_unwatch_entry e[KMON_READ_BATCH];
	struct mrmon_batch b = { .entries = (uintptr_t)e };
	size_t i, j;

	for (i = 0; i < n && b.count < km->max_batch; i++) {
		if (ev[i].cause != MRMON_CAUSE_CLEAR || !kmon_event_live(km, &ev[i]))
			continue;
		for (j = 0; j < b.count && e[j].slot != ev[i].slot; j++)
			;
		if (j == b.count)
			e[b.count++] = (struct mrmon_unwatch_entry){
				.slot = ev[i].slot, .expected = km->slots[ev[i].slot].w->expected,
			};
	}
	if (!b.count || !km->range_flags)
		return;
	/* On an error, the entries before `done` were processed. */
	if (kmon_ioctl(km->fd, MRMON_IOC_REVALIDATE, &b))
		mrc_log(1, "monitor kernel: revalidate: entry %u of %u failed", b.done, b.count);
	else
		b.done = b.count;
	for (j = 0; j < b.done; j++)
		if (e[j].expected)
			kmon_rearmed(km, e[j].slot, e[j].expected);
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

		kmon_revalidate_events(km, ev, n);
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
	.revalidate = kernel_revalidate,
	.drain = kernel_drain,
	.pending = kernel_pending,
};
