/* SPDX-License-Identifier: MIT */
/*
 * mrmon_fi_monitor.c - a libfabric `struct fid_mem_monitor` on /dev/mrmon.
 *
 * libfabric (1.17, prov/util/src/util_mem_monitor.c) calls, for system
 * memory:
 *   start/stop     when its first MR cache attaches / its last detaches
 *   subscribe      after it registered a new cache entry, under its mm_lock
 *   valid          on every cache hit, under its mm_lock
 *   unsubscribe    never (1.17's cache keeps ranges subscribed)
 * and it takes mm_lock inside notify().  So:
 *
 *   - subscribe WATCHes (addr, len); valid(addr, len) is true only while
 *     every watch of that key has its word intact: one acquire load each
 *     (normally one).  The module clears the word before the unmapping
 *     call returns, so a hit after munmap, even a raw syscall, misses.
 *   - a thread reads the event queue and, for each invalidated watch,
 *     calls notify() for the range, so libfabric drops the registration
 *     without waiting for a hit on it, and only then removes the watch:
 *     until every cache has dropped its entries, valid() must keep seeing
 *     it.  notify() cannot be called from subscribe or valid (libfabric
 *     holds mm_lock there), so a subscribe that finds its key's watch
 *     invalid adds a new one and leaves the old for the thread; the old
 *     one stops blocking valid() earlier once its users (subscribes) are
 *     known gone, see mrfi_valid().
 *
 * Lock order: libfabric's mm_lock, then mon->lock.  The thread never holds
 * mon->lock while it calls notify().
 *
 *   app thread                        kernel (mrmon)            event thread
 *   munmap(a) ------------------->  word[s] &= ~1 (release)
 *                                    queue {s, gen, a..}  ----> read()
 *   <- munmap returns                                            notify(a..)
 *   fi_mr_reg(a): valid(a) loads                                 lock; detach s;
 *   word[s] (acquire): cleared,                                  UNWATCH; unlock
 *   miss; subscribe adds a watch
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uapi/linux/mrmon.h>
#include "mrmon_fi.h"

#define MRFI_DEV		"/dev/mrmon"
#define MRFI_SLOTS		65536u
#define MRFI_EVENTS		4096u
#define MRFI_READ_BATCH		64
#define MRFI_MIN_BUCKETS	1024u

struct mrfi_watch {
	struct mrfi_watch *next;	/* hash chain */
	struct mrfi_watch *slot_next;	/* by_slot chain */
	uintptr_t addr;
	size_t len;
	uint32_t slot;
	uint64_t expected;
	unsigned users;		/* subscribes served, minus those known gone */
};

struct mrfi_monitor {
	struct fid_mem_monitor mon;	/* first: what libfabric holds */
	struct fi_ops_mem_monitor ops;
	struct fi_ops fid_ops;
	bool imported;
	/* Guards everything below, and stats. */
	pthread_mutex_t lock;
	bool running;
	bool forked;			/* in a child: the descriptor is not ours */
	int fd;
	int stop_fd;			/* eventfd that ends the thread */
	pthread_t thread;
	void *map;
	size_t map_size;
	const uint64_t *words;
	uint32_t nslots;
	/* The watches of each slot, newest first: the module frees a watch
	 * when it invalidates it and may give its slot to a new watch as soon
	 * as the event thread has read the event, before it handles it. */
	struct mrfi_watch **by_slot;
	struct mrfi_watch **buckets;	/* by (addr, len) */
	size_t nbuckets;
	struct mrfi_stats stats;
};

static struct mrfi_monitor *mrfi_of(struct fid_mem_monitor *mon)
{
	return (struct mrfi_monitor *)mon;
}

/* EINTR (a signal during the first WATCH of a process, while the kernel
 * sets up the mm's notifier list) is transient: retry. */
static int mrfi_ioctl(int fd, unsigned long cmd, void *arg)
{
	int rc;

	do
		rc = ioctl(fd, cmd, arg) < 0 ? -errno : 0;
	while (rc == -EINTR);
	return rc;
}

static size_t mrfi_hash(const struct mrfi_monitor *m, uintptr_t addr, size_t len)
{
	uint64_t h = ((uint64_t)addr >> 12) * 0x9e3779b97f4a7c15ull ^ len;

	return (size_t)(h ^ h >> 29) & (m->nbuckets - 1);
}

static bool mrfi_intact(const struct mrfi_monitor *m, const struct mrfi_watch *w)
{
	return __atomic_load_n(&m->words[w->slot], __ATOMIC_ACQUIRE) == w->expected;
}

/* Called with m->lock held: inserting keeps the table at load <= 1. */
static int mrfi_table_grow(struct mrfi_monitor *m)
{
	size_t n = m->nbuckets ? m->nbuckets * 2 : MRFI_MIN_BUCKETS;
	struct mrfi_watch **b = calloc(n, sizeof(*b));
	struct mrfi_watch **old = m->buckets;
	size_t oldn = m->nbuckets;

	if (!b)
		return -ENOMEM;
	m->buckets = b;
	m->nbuckets = n;
	for (size_t i = 0; i < oldn; i++) {
		for (struct mrfi_watch *w = old[i], *next; w; w = next) {
			size_t h = mrfi_hash(m, w->addr, w->len);

			next = w->next;
			w->next = b[h];
			b[h] = w;
		}
	}
	free(old);
	return 0;
}

/* A watch whose word was cleared is already gone from the module (ABI 3):
 * no system call; -ESTALE from a race with its invalidation is harmless. */
static void mrfi_unwatch(struct mrfi_monitor *m, struct mrfi_watch *w)
{
	struct mrmon_unwatch_entry e = { .slot = w->slot, .expected = w->expected };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };
	int rc;

	if (!mrfi_intact(m, w))
		return;
	rc = mrfi_ioctl(m->fd, MRMON_IOC_UNWATCH, &b);
	if (rc && rc != -ESTALE)
		fprintf(stderr, "mrmon-fi: unwatch of slot %u: %s\n", w->slot, strerror(-rc));
}

/* Called with m->lock held: the watch of `slot` with that generation. */
static struct mrfi_watch *mrfi_by_slot(const struct mrfi_monitor *m, uint32_t slot,
				       uint64_t generation)
{
	struct mrfi_watch *w = slot < m->nslots ? m->by_slot[slot] : NULL;

	while (w && w->expected >> 1 != generation)
		w = w->slot_next;
	return w;
}

/* Called with m->lock held: unlinks w from the table and the kernel. */
static void mrfi_detach(struct mrfi_monitor *m, struct mrfi_watch *w)
{
	struct mrfi_watch **p = &m->buckets[mrfi_hash(m, w->addr, w->len)];

	while (*p != w)
		p = &(*p)->next;
	*p = w->next;
	for (p = &m->by_slot[w->slot]; *p != w; p = &(*p)->slot_next)
		;
	*p = w->slot_next;
	m->stats.live--;
	mrfi_unwatch(m, w);
}

static bool mrfi_key(const struct mrfi_watch *w, uintptr_t addr, size_t len)
{
	return w->addr == addr && w->len == len;
}

static int mrfi_subscribe(struct fid_mem_monitor *mon, const void *addr, size_t len)
{
	struct mrfi_monitor *m = mrfi_of(mon);
	struct mrmon_range r = { .start = (uintptr_t)addr, .len = len };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	struct mrfi_watch *w;
	size_t h;
	int rc;

	pthread_mutex_lock(&m->lock);
	if (!m->running || m->forked) {
		rc = -FI_EPERM;
		goto out;
	}
	h = mrfi_hash(m, r.start, len);
	for (w = m->buckets[h]; w; w = w->next) {
		if (mrfi_key(w, r.start, len) && mrfi_intact(m, w)) {
			w->users++;
			m->stats.shared++;
			rc = 0;
			goto out;
		}
	}
	if (m->stats.live + 1 > m->nbuckets && mrfi_table_grow(m) == 0)
		h = mrfi_hash(m, r.start, len);
	w = calloc(1, sizeof(*w));
	rc = w ? -EAGAIN : -ENOMEM;
	/* Not armed (expected 0): an invalidation of the range is in
	 * flight, and it ends without waiting for us: try again. */
	while (rc == -EAGAIN) {
		r = (struct mrmon_range){ .start = (uintptr_t)addr, .len = len };
		b = (struct mrmon_batch){ .entries = (uintptr_t)&r, .count = 1 };
		rc = mrfi_ioctl(m->fd, MRMON_IOC_WATCH, &b);
		if (!rc && !r.expected) {
			rc = -EAGAIN;
			sched_yield();
		}
	}
	if (rc) {
		free(w);
		m->stats.watch_errors++;
		goto out;
	}
	w->addr = r.start;
	w->len = len;
	w->slot = r.slot;
	w->expected = r.expected;
	w->users = 1;
	w->next = m->buckets[h];	/* newest first */
	m->buckets[h] = w;
	w->slot_next = m->by_slot[r.slot];
	m->by_slot[r.slot] = w;
	m->stats.watches++;
	m->stats.live++;
out:
	pthread_mutex_unlock(&m->lock);
	return rc;
}

/*
 * Not called by libfabric 1.17 for system memory; for later versions: one
 * user of the key's newest watch goes.
 */
static void mrfi_unsubscribe(struct fid_mem_monitor *mon, const void *addr, size_t len)
{
	struct mrfi_monitor *m = mrfi_of(mon);
	struct mrfi_watch *w;

	pthread_mutex_lock(&m->lock);
	if (m->running && !m->forked) {
		for (w = m->buckets[mrfi_hash(m, (uintptr_t)addr, len)]; w; w = w->next) {
			if (mrfi_key(w, (uintptr_t)addr, len)) {
				if (w->users && --w->users == 0) {
					mrfi_detach(m, w);
					free(w);
				}
				break;
			}
		}
	}
	pthread_mutex_unlock(&m->lock);
}

/*
 * True when the key has an intact watch and no invalidated watch of the
 * key may still back a cache entry.  A false answer makes libfabric drop
 * the entry it checked; when the invalidated watch is the key's newest,
 * that entry subscribed it, so one of its users is gone.  Users of older
 * watches cannot be told apart from fresh entries: those wait for the
 * event thread's notify().
 */
static bool mrfi_valid(struct fid_mem_monitor *mon, const void *addr, size_t len)
{
	struct mrfi_monitor *m = mrfi_of(mon);
	bool intact = false, blocked = false, newest = true;

	pthread_mutex_lock(&m->lock);
	if (m->running && !m->forked) {
		for (struct mrfi_watch *w = m->buckets[mrfi_hash(m, (uintptr_t)addr, len)];
		     w; w = w->next) {
			if (!mrfi_key(w, (uintptr_t)addr, len))
				continue;
			if (mrfi_intact(m, w)) {
				intact = true;
			} else if (w->users) {
				blocked = true;
				w->users -= newest;
			}
			newest = false;
		}
	}
	intact = intact && !blocked;
	if (intact)
		m->stats.valid++;
	else
		m->stats.invalid++;
	pthread_mutex_unlock(&m->lock);
	return intact;
}

static void mrfi_notify(struct mrfi_monitor *m, uintptr_t start, uintptr_t end)
{
	struct fi_ops_mem_notify *ops = m->mon.import_ops;

	if (FI_CHECK_OP(ops, struct fi_ops_mem_notify, notify))
		ops->notify(&m->mon, (const void *)start, end - start);
}

/*
 * An invalidated watch is notified first and removed after: until libfabric
 * has dropped every entry in the range, valid() must keep seeing it.  A
 * watch without users is removed unnotified: its entries are gone, and a
 * late notify() would drop the fresh registration of a remap at the same
 * address (notify works by address).
 */
static void mrfi_retire(struct mrfi_monitor *m, uint32_t slot, uint64_t expected,
			uintptr_t start, uintptr_t end)
{
	struct mrfi_watch *w;
	bool backed;

	pthread_mutex_lock(&m->lock);
	w = mrfi_by_slot(m, slot, expected >> 1);
	/* An invalidated watch gains no users: subscribe shares intact ones. */
	backed = w && w->users;
	pthread_mutex_unlock(&m->lock);
	if (backed)
		mrfi_notify(m, start, end);
	pthread_mutex_lock(&m->lock);
	w = mrfi_by_slot(m, slot, expected >> 1);
	if (w) {
		mrfi_detach(m, w);
		free(w);
	}
	m->stats.notified += backed;
	pthread_mutex_unlock(&m->lock);
}

/* Lost events: every watch whose word is cleared is retired. */
static void mrfi_rescan(struct mrfi_monitor *m)
{
	for (uint32_t s = 0; s < m->nslots; s++) {
		struct mrfi_watch *w;
		uintptr_t addr = 0;
		size_t len = 0;
		uint64_t expected = 0;

		pthread_mutex_lock(&m->lock);
		for (w = m->by_slot[s]; w && mrfi_intact(m, w); w = w->slot_next)
			;
		if (w) {
			addr = w->addr;
			len = w->len;
			expected = w->expected;
		}
		pthread_mutex_unlock(&m->lock);
		if (expected) {
			mrfi_retire(m, s, expected, addr, addr + len);
			s--;	/* the slot may hold another one */
		}
	}
}

static void mrfi_event(struct mrfi_monitor *m, const struct mrmon_event *ev)
{
	uint64_t expected = 0;

	if (ev->cause == MRMON_CAUSE_OVERFLOW) {
		pthread_mutex_lock(&m->lock);
		m->stats.overflows++;
		pthread_mutex_unlock(&m->lock);
		mrfi_rescan(m);
		return;
	}
	pthread_mutex_lock(&m->lock);
	m->stats.events++;
	/* An event of a watch already removed (unsubscribed) is dropped. */
	if (mrfi_by_slot(m, ev->slot, ev->generation))
		expected = ev->generation << 1 | MRMON_WORD_VALID;
	pthread_mutex_unlock(&m->lock);
	if (expected)
		mrfi_retire(m, ev->slot, expected, ev->start, ev->end);
}

static void *mrfi_thread(void *arg)
{
	struct mrfi_monitor *m = arg;
	struct mrmon_event ev[MRFI_READ_BATCH];
	struct pollfd p[2] = {
		{ .fd = m->fd, .events = POLLIN },
		{ .fd = m->stop_fd, .events = POLLIN },
	};

	for (;;) {
		ssize_t got;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "mrmon-fi: poll: %s\n", strerror(errno));
			return NULL;
		}
		if (p[1].revents)
			return NULL;
		if (p[0].revents & (POLLERR | POLLNVAL)) {
			fprintf(stderr, "mrmon-fi: event queue unusable (revents %#x)\n",
				p[0].revents);
			return NULL;
		}
		while ((got = read(m->fd, ev, sizeof(ev))) > 0) {
			for (size_t i = 0; i < (size_t)got / sizeof(ev[0]); i++)
				mrfi_event(m, &ev[i]);
		}
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			fprintf(stderr, "mrmon-fi: reading events: %s\n", strerror(errno));
	}
}

static int mrfi_handshake(int fd, struct mrmon_handshake *hs)
{
	int rc;

	*hs = (struct mrmon_handshake){ .abi_version = MRMON_ABI_VERSION };
	rc = mrfi_ioctl(fd, MRMON_IOC_HANDSHAKE, hs);
	if (rc)
		fprintf(stderr, "mrmon-fi: handshake: %s (module ABI %u, library %u)\n",
			strerror(-rc), hs->abi_version, MRMON_ABI_VERSION);
	return rc;
}

static int mrfi_open_device(int *fd)
{
	*fd = open(MRFI_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (*fd >= 0)
		return 0;
	return errno == ENOENT ? -ENODEV : -errno;
}

static void mrfi_teardown(struct mrfi_monitor *m)
{
	if (m->map)
		munmap(m->map, m->map_size);
	if (m->fd >= 0)
		close(m->fd);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	for (size_t i = 0; i < m->nbuckets; i++) {
		for (struct mrfi_watch *w = m->buckets[i], *next; w; w = next) {
			next = w->next;
			free(w);
		}
	}
	free(m->buckets);
	free(m->by_slot);
	m->map = NULL;
	m->fd = m->stop_fd = -1;
	m->buckets = m->by_slot = NULL;
	m->nbuckets = 0;
	m->stats.live = 0;
}

static int mrfi_setup(struct mrfi_monitor *m)
{
	struct mrmon_handshake hs;
	struct mrmon_setup su = { 0 };
	int rc = mrfi_open_device(&m->fd);

	if (rc)
		return rc;
	rc = mrfi_handshake(m->fd, &hs);
	if (rc)
		return rc;
	su.nslots = MRFI_SLOTS < hs.max_slots ? MRFI_SLOTS : hs.max_slots;
	su.nevents = MRFI_EVENTS < hs.max_events ? MRFI_EVENTS : hs.max_events;
	rc = mrfi_ioctl(m->fd, MRMON_IOC_SETUP, &su);
	if (rc)
		return rc;
	m->map = mmap(NULL, su.map_size, PROT_READ, MAP_SHARED, m->fd, 0);
	if (m->map == MAP_FAILED) {
		m->map = NULL;
		return -errno;
	}
	m->map_size = su.map_size;
	m->words = (const uint64_t *)((const char *)m->map + hs.header_size);
	m->nslots = su.nslots;
	m->by_slot = calloc(su.nslots, sizeof(*m->by_slot));
	m->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (!m->by_slot || m->stop_fd < 0 || mrfi_table_grow(m))
		return m->stop_fd < 0 ? -errno : -ENOMEM;
	return 0;
}

static int mrfi_start(struct fid_mem_monitor *mon)
{
	struct mrfi_monitor *m = mrfi_of(mon);
	int rc;

	pthread_mutex_lock(&m->lock);
	rc = m->running ? 0 : mrfi_setup(m);
	if (!rc && !m->running) {
		rc = -pthread_create(&m->thread, NULL, mrfi_thread, m);
		m->running = !rc;
	}
	if (rc) {
		fprintf(stderr, "mrmon-fi: start: %s\n", strerror(-rc));
		mrfi_teardown(m);
	}
	pthread_mutex_unlock(&m->lock);
	return rc;
}

static void mrfi_stop(struct fid_mem_monitor *mon)
{
	struct mrfi_monitor *m = mrfi_of(mon);
	uint64_t one = 1;

	pthread_mutex_lock(&m->lock);
	if (!m->running) {
		pthread_mutex_unlock(&m->lock);
		return;
	}
	m->running = false;
	pthread_mutex_unlock(&m->lock);
	/* The thread takes the lock per event: join it without holding it. */
	if (write(m->stop_fd, &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "mrmon-fi: stop: %s\n", strerror(errno));
	pthread_join(m->thread, NULL);
	pthread_mutex_lock(&m->lock);
	mrfi_teardown(m);
	pthread_mutex_unlock(&m->lock);
}

/* Our close, until libfabric's import replaces fid.ops with its own. */
static int mrfi_fid_close(struct fid *fid)
{
	mrfi_monitor_close(container_of(fid, struct fid_mem_monitor, fid));
	return 0;
}

/*
 * A forked child shares nothing with the module (calls fail with EPERM,
 * the word map is not inherited): from then on the monitor refuses
 * subscribes and every hit misses, so libfabric registers uncached.  The
 * locks are taken around fork() so that the child's copies are free.
 */
static struct mrfi_monitor *mrfi_all[8];

static void mrfi_atfork_each(void (*fn)(struct mrfi_monitor *m))
{
	for (size_t i = 0; i < sizeof(mrfi_all) / sizeof(mrfi_all[0]); i++) {
		struct mrfi_monitor *m = __atomic_load_n(&mrfi_all[i], __ATOMIC_ACQUIRE);

		if (m)
			fn(m);
	}
}

static void mrfi_lock(struct mrfi_monitor *m)
{
	pthread_mutex_lock(&m->lock);
}

static void mrfi_unlock(struct mrfi_monitor *m)
{
	pthread_mutex_unlock(&m->lock);
}

static void mrfi_orphan(struct mrfi_monitor *m)
{
	m->forked = true;
	pthread_mutex_unlock(&m->lock);
}

static void mrfi_atfork_prepare(void)
{
	mrfi_atfork_each(mrfi_lock);
}

static void mrfi_atfork_parent(void)
{
	mrfi_atfork_each(mrfi_unlock);
}

static void mrfi_atfork_child(void)
{
	mrfi_atfork_each(mrfi_orphan);
}

static pthread_once_t mrfi_atfork_once = PTHREAD_ONCE_INIT;

static void mrfi_atfork_install(void)
{
	pthread_atfork(mrfi_atfork_prepare, mrfi_atfork_parent, mrfi_atfork_child);
}

static int mrfi_register(struct mrfi_monitor *m)
{
	pthread_once(&mrfi_atfork_once, mrfi_atfork_install);
	for (size_t i = 0; i < sizeof(mrfi_all) / sizeof(mrfi_all[0]); i++) {
		struct mrfi_monitor *none = NULL;

		if (__atomic_compare_exchange_n(&mrfi_all[i], &none, m, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return 0;
	}
	return -EMFILE;
}

static void mrfi_unregister(struct mrfi_monitor *m)
{
	for (size_t i = 0; i < sizeof(mrfi_all) / sizeof(mrfi_all[0]); i++) {
		struct mrfi_monitor *expect = m;

		__atomic_compare_exchange_n(&mrfi_all[i], &expect, NULL, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
}

int mrfi_monitor_open(struct fid_mem_monitor **out)
{
	struct mrmon_handshake hs;
	struct mrfi_monitor *m;
	int fd, rc;

	if (!out)
		return -EINVAL;
	rc = mrfi_open_device(&fd);
	if (rc)
		return rc;
	rc = mrfi_handshake(fd, &hs);
	close(fd);
	if (rc)
		return rc;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->fd = m->stop_fd = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->ops = (struct fi_ops_mem_monitor){
		.size = sizeof(m->ops),
		.start = mrfi_start,
		.stop = mrfi_stop,
		.subscribe = mrfi_subscribe,
		.unsubscribe = mrfi_unsubscribe,
		.valid = mrfi_valid,
	};
	m->fid_ops = (struct fi_ops){ .size = sizeof(m->fid_ops), .close = mrfi_fid_close };
	m->mon.fid.fclass = FI_CLASS_MEM_MONITOR;
	m->mon.fid.ops = &m->fid_ops;
	m->mon.export_ops = &m->ops;
	rc = mrfi_register(m);
	if (rc) {
		pthread_mutex_destroy(&m->lock);
		free(m);
		return rc;
	}
	*out = &m->mon;
	return 0;
}

int mrfi_monitor_import(struct fid_mem_monitor *mon)
{
	struct fid *cache;
	int rc;

	if (!mon || mrfi_of(mon)->imported)
		return -EINVAL;
	rc = fi_open(FI_VERSION(1, 13), "mr_cache", NULL, 0, 0, &cache, NULL);
	if (rc)
		return rc;
	rc = fi_import_fid(cache, &mon->fid, 0);
	fi_close(cache);
	if (!rc)
		mrfi_of(mon)->imported = true;
	return rc;
}

void mrfi_monitor_close(struct fid_mem_monitor *mon)
{
	struct mrfi_monitor *m = mrfi_of(mon);

	if (!m)
		return;
	/* After the import, fid.ops is libfabric's: its close forgets us. */
	if (m->imported)
		fi_close(&mon->fid);
	mrfi_stop(mon);
	mrfi_unregister(m);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

void mrfi_monitor_stats(struct fid_mem_monitor *mon, struct mrfi_stats *out)
{
	struct mrfi_monitor *m = mrfi_of(mon);

	pthread_mutex_lock(&m->lock);
	*out = m->stats;
	pthread_mutex_unlock(&m->lock);
}
