/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-fuzz: 4 threads run random sequences of open, handshake,
 * setup, mmap, munmap, mremap, watch, unwatch, ABI 2's revalidate (always
 * EOPNOTSUPP now), read, poll, unknown commands
 * (ABI 1's among them), fork and close on /dev/mrmon, with random and
 * boundary arguments (zero, the limits and one past, overflowing ranges,
 * kernel and unmapped pointers, read-only argument pages, misaligned
 * structs, every reserved and output field set), interleaved with
 * mmap/munmap/mremap/madvise/mprotect of the memory they watch.
 * MRMON_FUZZ_OPS (default 100,000) operations in all.
 *
 * Oracle: every call's result must be one the ABI table (docs/abi.md)
 * allows for its arguments and the descriptor's state; a word read from
 * the map must be the watch's value, its invalidated value, or (its slot
 * reused after its event was read) a newer generation; a WATCH entry is
 * armed (bit 0 set) or not armed (expected 0, slot 0: an invalidation of
 * the range was in flight); UNWATCH of a watch whose word was cleared is
 * ESTALE (ABI 3 frees it in the callback); events must be well formed.
 * Descriptors owned by one
 * thread are checked exactly; two descriptors shared by all threads
 * (closed and reopened under the others' feet) are checked against the
 * errnos any call may return.  One 2 MiB window per thread is split and
 * merged again (mprotect), so its watches see CLEARs, and the window's
 * first 32 pages are where a thread does what a cache does (watch,
 * register the range as its io_uring fixed buffer, re-check the word).
 *
 * Leaks: the fuzz runs in a child process; after it exits the module's
 * reference count must be back (exact: every open file holds one), the
 * module's vmalloc areas (/proc/vmallocinfo lines of [mrmon]) back
 * (exact), slab within 256 bytes per descriptor opened.  Controls: as many
 * plain descriptors as the fuzz opened, and 64 set-up
 * descriptors held open must show in all three.  Kernel warnings are the
 * harness's verdict (guest/kernel-log scans dmesg).
 */
#include <dirent.h>
#include <liburing.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include "mrmon_test.h"

#define THREADS		4
#define OWN		3	/* descriptors per thread */
#define SHARED		2	/* descriptors every thread uses */
#define REGIONS		4	/* memory regions per thread */
#define REGION_PAGES	16
#define PIN_PAGES	32	/* of the split window: watched and registered */
#define BIG_PAGES	64	/* of the split window: present */
#define MAX_WATCH	32	/* remembered watches per descriptor */
#define LIMIT_SLOTS	4096	/* module limits during the fuzz */
#define LIMIT_EVENTS	1024
#define HELD		64	/* control: descriptors kept open */
#define CTX_BYTES	256	/* the least an open allocates: struct mrmon_ctx */
#define SHARED_FD	900	/* shared descriptors live at 900, 901 */

/* Addresses no struct may come from: NULL, low, kernel, vsyscall, ~0. */
static const uintptr_t bad_ptrs[] = {
	0, 1, 4095, 0xffff888000000000ul, 0xffffffffff600000ul, ~0ul,
};

struct watch {
	uint32_t slot;
	uint64_t expected;
	uint64_t start, end;	/* page-rounded */
};

struct desc {
	int fd;
	bool handshaken, setup;
	uint32_t nslots;
	const uint64_t *words;	/* NULL unless mapped */
	void *map;
	size_t map_len;
	struct watch w[MAX_WATCH];
	int nw;
};

struct region {
	char *p;
	size_t len;
};

struct worker {
	unsigned int seed;
	long ops;
	long opens, watches, events, forks, not_armed;
	long registers, rechecks_invalid;
	struct desc d[OWN];
	struct region r[REGIONS];
	char *ro_entry;		/* a page it makes read-only around one call */
	char *big_raw, *big;	/* a 2 MiB window one VMA covers: a split in
				   it CLEARs every watch there, and
				   REVALIDATE can re-arm the pinned ones */
	struct io_uring ring;	/* its one fixed buffer: [pin_start, pin_end) */
	bool ring_ok;
	uint64_t pin_start, pin_end;
};

static struct mrmon_handshake limits;
static uint64_t task_size;	/* probed: 4- or 5-level page tables */
static char *ro_page;		/* PROT_READ: valid structs that cannot be written back */
static char *none_page;		/* PROT_NONE */
static int reported;
static long *fuzz_opens;	/* shared with the parent: the slab bound */

static unsigned int rnd(struct worker *w, unsigned int n)
{
	return (unsigned int)rand_r(&w->seed) % n;
}

static uint64_t rnd64(struct worker *w)
{
	return (uint64_t)rand_r(&w->seed) << 33 ^ (uint64_t)rand_r(&w->seed) << 2 ^
	       (uint64_t)rand_r(&w->seed);
}

/* rc (0 or -errno) must be one of allowed[] (terminated by 1). */
static void expect_in(const char *what, int line, int rc, const int *allowed)
{
	for (; *allowed != 1; allowed++)
		if (rc == *allowed)
			return;
	__atomic_fetch_add(&test_failures, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(&reported, 1, __ATOMIC_RELAXED) < 20)
		fprintf(stderr, "line %d: %s returned %d (%s)\n", line, what, rc,
			rc ? strerror(-rc) : "success");
}
#define EXPECT(what, rc, ...) expect_in(what, __LINE__, rc, (const int[]){ __VA_ARGS__, 1 })

/* What any call on a descriptor another thread may close or reopen can
 * return: the ABI's errnos, never EPERM (same mm) or anything else. */
#define LOOSE 0, -EBADF, -EINVAL, -EFAULT, -EBADFD, -EBUSY, -ENOSPC, -ESTALE, -EOPNOTSUPP, \
	-EAGAIN, -ENOTTY, -EPROTONOSUPPORT, -ENODEV, -EACCES

static int sys(long r)
{
	return r < 0 ? -errno : 0;
}

static void *pick_bad_ptr(struct worker *w)
{
	switch (rnd(w, 3)) {
	case 0:
		return (void *)bad_ptrs[rnd(w, sizeof(bad_ptrs) / sizeof(bad_ptrs[0]))];
	case 1:
		return none_page + rnd(w, 64);
	default:
		return (void *)(uintptr_t)rnd64(w);
	}
}

/* A random address: in a region, misaligned, zero, or past TASK_SIZE. */
static uint64_t pick_addr(struct worker *w)
{
	struct region *r = &w->r[rnd(w, REGIONS)];

	switch (rnd(w, 8)) {
	case 0:
		return 0;
	case 1:
		return 0x7ffffffff000ul + rnd(w, 8192);
	case 2:
		return ~0ull - rnd(w, 8192);
	case 3:
		return rnd64(w);
	case 4:
		return (uintptr_t)w->big + rnd(w, BIG_PAGES * PAGE);
	default:
		return (uintptr_t)r->p + rnd(w, REGION_PAGES * PAGE);
	}
}

static uint64_t pick_len(struct worker *w)
{
	switch (rnd(w, 8)) {
	case 0:
		return 0;
	case 1:
		return ~0ull - rnd(w, 4);
	case 2:
		return 1ull << 47;
	default:
		return 1 + rnd(w, 4 * PAGE);
	}
}

static void desc_forget(struct desc *d)
{
	if (d->map)
		munmap(d->map, d->map_len);
	memset(d, 0, sizeof(*d));
	d->fd = -1;
}

static void op_open(struct worker *w, struct desc *d)
{
	if (d->fd >= 0) {
		int fd = d->fd;

		desc_forget(d);
		EXPECT("close", sys(close(fd)), 0);
		return;
	}
	d->fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	EXPECT("open", d->fd < 0 ? -errno : 0, 0);
	w->opens++;
}

/* One of HANDSHAKE's output fields, which must be zero on input. */
static void hs_set_output(struct worker *w, struct mrmon_handshake *hs)
{
	uint32_t v = rand_r(&w->seed) | 1;

	switch (rnd(w, 6)) {
	case 0:
		hs->features = rnd64(w) | 1;
		break;
	case 1:
		hs->max_slots = v;
		break;
	case 2:
		hs->max_events = v;
		break;
	case 3:
		hs->max_batch = v;
		break;
	case 4:
		hs->header_size = v;
		break;
	default:
		hs->event_size = v;
	}
}

static void op_handshake(struct worker *w, struct desc *d)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	unsigned int k = rnd(w, 8);
	int rc;

	switch (k) {
	case 0:
		hs.flags = 1u << rnd(w, 32);
		break;
	case 1:
		hs.pad = rand_r(&w->seed) | 1;
		break;
	case 2:
		hs.reserved[rnd(w, 4)] = rnd64(w) | 1;
		break;
	case 3:
		hs_set_output(w, &hs);
		break;
	case 4:
		hs.abi_version = rnd(w, 2) ? rnd(w, MRMON_ABI_VERSION)
					   : MRMON_ABI_VERSION + 1 + rnd(w, 100);
		break;
	case 5:
		EXPECT("handshake from a bad pointer",
		       mon_ioctl(d->fd, MRMON_IOC_HANDSHAKE, pick_bad_ptr(w)), -EFAULT);
		return;
	case 6:
		EXPECT("handshake into read-only memory",
		       mon_ioctl(d->fd, MRMON_IOC_HANDSHAKE, ro_page), -EFAULT);
		return;
	}
	rc = mon_ioctl(d->fd, MRMON_IOC_HANDSHAKE, &hs);
	if (k <= 3) {
		EXPECT("handshake with a reserved or output field set", rc, -EINVAL);
	} else if (k == 4) {
		EXPECT("handshake of another version", rc, -EPROTONOSUPPORT);
		CHECK_EQ(hs.abi_version, MRMON_ABI_VERSION);
	} else {
		EXPECT("handshake", rc, 0);
		CHECK(hs.max_slots == limits.max_slots && hs.header_size == PAGE);
		d->handshaken = true;
	}
}

static void op_setup(struct worker *w, struct desc *d)
{
	static const uint32_t good[] = { 1, 2, 3, 511, 512, 513, LIMIT_SLOTS };
	struct mrmon_setup su = {
		.nslots = good[rnd(w, 7)],
		.nevents = rnd(w, 2) ? 1 + rnd(w, 64) : LIMIT_EVENTS,
	};
	unsigned int k = rnd(w, 10);
	int rc;

	switch (k) {
	case 0:
		su.nslots = rnd(w, 2) ? 0 : LIMIT_SLOTS + 1 + rnd(w, 2) * (UINT32_MAX - LIMIT_SLOTS - 1);
		break;
	case 1:
		su.nevents = rnd(w, 2) ? 0 : LIMIT_EVENTS + 1;
		break;
	case 2:
		su.flags = 1u << rnd(w, 32);
		break;
	case 3:
		su.map_size = 1 + rnd(w, 1000);
		break;
	case 4:
		su.reserved[rnd(w, 2)] = 1;
		break;
	case 5:
		EXPECT("setup from a bad pointer",
		       mon_ioctl(d->fd, MRMON_IOC_SETUP, pick_bad_ptr(w)), -EFAULT);
		return;
	case 6:
		/* Valid, but the answer cannot be written: undone. */
		rc = mon_ioctl(d->fd, MRMON_IOC_SETUP, ro_page + 768);
		EXPECT("setup into read-only memory", rc, d->setup ? -EBUSY : -EFAULT);
		return;
	}
	rc = mon_ioctl(d->fd, MRMON_IOC_SETUP, &su);
	if (k <= 4) {
		EXPECT("setup with a bad field", rc, -EINVAL);
	} else if (d->setup) {
		EXPECT("second setup", rc, -EBUSY);
	} else {
		EXPECT("setup", rc, 0);
		if (!rc) {
			d->setup = true;
			d->nslots = su.nslots;
			CHECK_EQ(su.map_size, PAGE + ((su.nslots * 8 + PAGE - 1) & ~(PAGE - 1)));
		}
	}
}

static size_t map_size(const struct desc *d)
{
	return PAGE + ((d->nslots * 8ul + PAGE - 1) & ~(PAGE - 1));
}

static int try_mmap(int fd, size_t len, int prot, int flags, off_t off, void **out)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

static void op_mmap(struct worker *w, struct desc *d)
{
	size_t full = d->setup ? map_size(d) : PAGE;
	unsigned int k = rnd(w, 6);
	void *p = NULL;
	int rc;

	if (d->map) {
		/* munmap, shrink by mremap, move by mremap, or try to grow. */
		void *q;

		switch (rnd(w, 4)) {
		case 0:
			q = mremap(d->map, d->map_len, d->map_len + PAGE, MREMAP_MAYMOVE);
			EXPECT("mremap growing the map", q == MAP_FAILED ? -errno : 0, -EFAULT);
			if (q != MAP_FAILED)
				munmap(q, d->map_len + PAGE);
			break;
		case 1:
			if (d->map_len > PAGE) {
				q = mremap(d->map, d->map_len, PAGE, 0);
				EXPECT("mremap shrinking the map", q == MAP_FAILED ? -errno : 0, 0);
				if (q != MAP_FAILED) {
					d->map_len = PAGE;
					d->words = NULL;
				}
			}
			break;
		case 2:
			/* Move it: reserve a place, then MREMAP_FIXED over it. */
			q = mmap(NULL, d->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (q == MAP_FAILED)
				break;
			p = mremap(d->map, d->map_len, d->map_len, MREMAP_MAYMOVE | MREMAP_FIXED, q);
			EXPECT("mremap moving the map", p == MAP_FAILED ? -errno : 0, 0);
			if (p == MAP_FAILED) {
				munmap(q, d->map_len);
				break;
			}
			d->map = p;
			if (d->words)
				d->words = (const uint64_t *)((char *)p + PAGE);
			break;
		default:
			EXPECT("munmap of the map", sys(munmap(d->map, d->map_len)), 0);
			d->map = NULL;
			d->words = NULL;
		}
		return;
	}
	switch (k) {
	case 0:
		rc = try_mmap(d->fd, full, PROT_READ | PROT_WRITE, MAP_SHARED, 0, &p);
		EXPECT("mmap PROT_WRITE", rc, d->setup ? -EPERM : -EBADFD, -EACCES);
		break;
	case 1:
		rc = try_mmap(d->fd, full, PROT_READ, MAP_SHARED, PAGE * (1 + rnd(w, 4)), &p);
		EXPECT("mmap at an offset", rc, d->setup ? -EINVAL : -EBADFD);
		break;
	case 2:
		rc = try_mmap(d->fd, full + PAGE * (1 + rnd(w, 4)), PROT_READ, MAP_SHARED, 0, &p);
		EXPECT("mmap past map_size", rc, d->setup ? -EINVAL : -EBADFD);
		break;
	default:
		full = rnd(w, 3) ? full : PAGE;
		rc = try_mmap(d->fd, full, PROT_READ, k == 3 ? MAP_PRIVATE : MAP_SHARED, 0, &p);
		EXPECT("mmap", rc, d->setup ? 0 : -EBADFD);
		break;
	}
	if (!rc && p) {
		if (k <= 2) {
			munmap(p, full);
			return;
		}
		d->map = p;
		d->map_len = full;
		d->words = full == map_size(d) ? (const uint64_t *)((char *)p + PAGE) : NULL;
		CHECK_EQ(((const struct mrmon_header *)p)->nslots, d->nslots);
	}
}

static void check_word(struct desc *d, const struct watch *x)
{
	uint64_t v;

	if (!d->words)
		return;
	v = __atomic_load_n(&d->words[x->slot], __ATOMIC_ACQUIRE);
	CHECK(v == x->expected || v == (x->expected & ~MRMON_WORD_VALID) ||
	      v >> 1 > x->expected >> 1);
}

static void op_watch(struct worker *w, struct desc *d)
{
	struct mrmon_range r[8];
	struct mrmon_batch b = { .entries = (uintptr_t)r, .count = 1 + rnd(w, 8) };
	unsigned int k = rnd(w, 10), i, bad = 0;
	int rc;

	memset(r, 0, sizeof(r));
	for (i = 0; i < b.count; i++) {
		r[i].start = pick_addr(w);
		r[i].len = pick_len(w);
		r[i].cookie = rnd64(w);
		if (!rnd(w, 20))
			r[i].flags |= 1u << rnd(w, 32);
		if (!rnd(w, 40))
			r[i].slot = 1 + rnd(w, 64);
		if (!rnd(w, 40))
			r[i].expected = rnd64(w) | 1;
	}
	switch (k) {
	case 0:
		b.count = rnd(w, 2) ? 0 : limits.max_batch + 1 + rnd(w, 2) * (UINT32_MAX - limits.max_batch - 1);
		break;
	case 1:
		b.flags = 1;
		break;
	case 2:
		b.done = 1 + rnd(w, 4);
		break;
	case 3:
		b.reserved[rnd(w, 2)] = 1;
		break;
	case 4:
		b.entries = (uintptr_t)pick_bad_ptr(w);
		break;
	case 5:
		rc = mon_ioctl(d->fd, MRMON_IOC_WATCH, pick_bad_ptr(w));
		EXPECT("watch from a bad pointer", rc, -EFAULT);
		return;
	case 6:
		/* A valid range in read-only memory: watched, then undone. */
		rc = mon_ioctl(d->fd, MRMON_IOC_WATCH, ro_page + 512);
		EXPECT("watch into read-only memory", rc, d->setup ? -EFAULT : -EBADFD);
		return;
	case 7:
		/* A misaligned array is fine. */
		memmove((char *)r + 4, r, b.count * sizeof(r[0]) - 4);
		b.entries += 4;
		break;
	}
	rc = mon_ioctl(d->fd, MRMON_IOC_WATCH, &b);
	if (k <= 3) {
		EXPECT("watch with a bad batch", rc, -EINVAL);
		return;
	}
	if (!d->setup) {
		EXPECT("watch before setup", rc, -EBADFD);
		return;
	}
	CHECK(b.done <= b.count);
	if (k == 4) {
		EXPECT("watch of a bad array", rc, -EFAULT);
		CHECK_EQ(b.done, 0);
		return;
	}
	/* Entries before `done` took effect; the failing one says why. */
	const char *e = (const char *)(uintptr_t)b.entries;

	for (i = 0; i < b.done; i++) {
		struct mrmon_range x;

		memcpy(&x, e + i * sizeof(x), sizeof(x));
		if (!x.expected) {	/* not armed: a collision */
			CHECK_EQ(x.slot, 0);
			w->not_armed++;
			continue;
		}
		CHECK(x.slot < d->nslots && (x.expected & MRMON_WORD_VALID));
		w->watches++;
		if (d->nw < MAX_WATCH) {
			d->w[d->nw] = (struct watch){ x.slot, x.expected, x.start & ~(PAGE - 1),
						      (x.start + x.len + PAGE - 1) & ~(PAGE - 1) };
			check_word(d, &d->w[d->nw]);
			d->nw++;
		}
	}
	if (b.done < b.count) {
		struct mrmon_range x;
		uint64_t end;

		memcpy(&x, e + b.done * sizeof(x), sizeof(x));
		end = (x.start + x.len + PAGE - 1) & ~(PAGE - 1);
		bad = x.flags || x.slot || x.expected || !x.len ||
		      x.start + x.len < x.start || !end || end > task_size;
		EXPECT("failing watch entry", rc, bad ? -EINVAL : -ENOSPC);
	} else {
		EXPECT("watch", rc, 0);
	}
}

static void op_unwatch(struct worker *w, struct desc *d)
{
	struct mrmon_unwatch_entry u = { 0 };
	struct mrmon_batch b = { .entries = (uintptr_t)&u, .count = 1 };
	unsigned int k = rnd(w, 6);
	int rc;

	if (k <= 2 && d->nw) {
		/* A watch: 0 (ESTALE if an invalidation freed it; another
		 * thread's mprotect may do so at any time) then, again, ESTALE.
		 * One whose word was cleared before the call is gone: ESTALE. */
		int i = rnd(w, d->nw);
		bool gone = d->words &&
			    __atomic_load_n(&d->words[d->w[i].slot], __ATOMIC_ACQUIRE) !=
			    d->w[i].expected;

		u.slot = d->w[i].slot;
		u.expected = d->w[i].expected & ~(uint64_t)rnd(w, 2);
		check_word(d, &d->w[i]);
		d->w[i] = d->w[--d->nw];
		if (gone)
			EXPECT("unwatch of a gone watch", mon_ioctl(d->fd, MRMON_IOC_UNWATCH, &b),
			       -ESTALE);
		else
			EXPECT("unwatch", mon_ioctl(d->fd, MRMON_IOC_UNWATCH, &b), 0, -ESTALE);
		b.done = 0;
		EXPECT("unwatch twice", mon_ioctl(d->fd, MRMON_IOC_UNWATCH, &b), -ESTALE);
		return;
	}
	u.slot = k == 3 ? d->nslots + rnd(w, 3) : rnd(w, d->nslots + 1);
	u.expected = rnd64(w);
	u.flags = k == 4;
	rc = mon_ioctl(d->fd, MRMON_IOC_UNWATCH, &b);
	if (!d->setup)
		EXPECT("unwatch before setup", rc, -EBADFD);
	else if (u.flags || u.slot >= d->nslots)
		EXPECT("unwatch of a bad slot", rc, -EINVAL);
	else
		/* A random generation of a slot: at most a 1 in 2^63 hit. */
		EXPECT("unwatch of a random generation", rc, -ESTALE);
}

/* A cache's registration: WATCH a range of the window's first PIN_PAGES,
 * register it in place of the thread's last one, re-check
 * the word (another thread's fork can make the pin copy a page: invalid,
 * counted). */
static void op_register(struct worker *w, struct desc *d)
{
	size_t off = rnd(w, PIN_PAGES), n = 1 + rnd(w, PIN_PAGES - off < 8 ? PIN_PAGES - off : 8);
	struct mrmon_range r = { .start = (uintptr_t)w->big + off * PAGE, .len = n * PAGE,
				 .cookie = rnd64(w) };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	struct iovec iov = { (void *)(uintptr_t)r.start, r.len };
	int rc;

	if (!w->ring_ok || !d->setup || d->nw == MAX_WATCH)
		return;
	rc = mon_ioctl(d->fd, MRMON_IOC_WATCH, &b);
	EXPECT("watch to register", rc, 0, -ENOSPC);
	if (rc)
		return;
	if (!r.expected) {
		w->not_armed++;
		return;
	}
	w->watches++;
	d->w[d->nw++] = (struct watch){ r.slot, r.expected, r.start, r.start + r.len };
	if (w->pin_end)
		EXPECT("unregister", io_uring_unregister_buffers(&w->ring), 0);
	w->pin_start = w->pin_end = 0;
	rc = io_uring_register_buffers(&w->ring, &iov, 1);
	EXPECT("register", rc, 0);
	if (rc)
		return;
	w->pin_start = r.start;
	w->pin_end = r.start + r.len;
	w->registers++;
	if (d->words && __atomic_load_n(&d->words[r.slot], __ATOMIC_ACQUIRE) != r.expected)
		w->rechecks_invalid++;
}

/* ABI 2's REVALIDATE: EOPNOTSUPP whatever the argument (docs/abi.md). */
static void op_revalidate(struct worker *w, struct desc *d)
{
	struct mrmon_unwatch_entry u = { 0 };
	struct mrmon_batch b = { .entries = (uintptr_t)&u, .count = 1 };

	if (d->nw && rnd(w, 2)) {
		u.slot = d->w[0].slot;
		u.expected = d->w[0].expected;
	}
	if (!rnd(w, 4))
		b.entries = (uintptr_t)pick_bad_ptr(w);
	EXPECT("revalidate", mon_ioctl(d->fd, MRMON_IOC_REVALIDATE, &b), -EOPNOTSUPP);
}

static void check_events(struct desc *d, const struct mrmon_event *ev, int n)
{
	for (int i = 0; i < n; i++) {
		if (ev[i].cause == MRMON_CAUSE_OVERFLOW) {
			CHECK_EQ(ev[i].slot, ~0u);
			continue;
		}
		CHECK(ev[i].cause >= MRMON_CAUSE_UNMAP && ev[i].cause <= MRMON_CAUSE_OTHER);
		CHECK(ev[i].slot < d->nslots && ev[i].start < ev[i].end);
	}
}

static void op_read(struct worker *w, struct desc *d)
{
	struct mrmon_event ev[17];	/* 16 and a misaligned start */
	unsigned int k = rnd(w, 5);
	size_t len = sizeof(ev[0]) * (1 + rnd(w, 16));
	ssize_t got;
	int rc;

	if (k == 0)
		len = rnd(w, sizeof(ev[0]));
	if (k == 1) {
		got = read(d->fd, pick_bad_ptr(w), sizeof(ev));
		rc = got < 0 ? -errno : 0;
		/* With events queued the copy faults: they become an overflow. */
		EXPECT("read into a bad buffer", rc, d->setup ? -EAGAIN : -EBADFD, -EFAULT);
		return;
	}
	if (k == 2) {
		struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
		int n = poll(&pfd, 1, 0);

		CHECK_EQ(n, d->setup ? (pfd.revents ? 1 : 0) : 1);
		CHECK(d->setup ? !(pfd.revents & ~(POLLIN | POLLRDNORM)) : !!(pfd.revents & POLLERR));
		return;
	}
	got = read(d->fd, (char *)ev + (k == 3), len);
	rc = got < 0 ? -errno : 0;
	if (!d->setup)
		EXPECT("read before setup", rc, -EBADFD);
	else if (len < sizeof(ev[0]))
		EXPECT("read of less than an event", rc, -EINVAL);
	else
		EXPECT("read", rc, 0, -EAGAIN);
	if (got > 0) {
		struct mrmon_event copy[16];

		CHECK_EQ(got % sizeof(ev[0]), 0);
		memcpy(copy, (char *)ev + (k == 3), got);
		check_events(d, copy, got / sizeof(ev[0]));
		w->events += got / sizeof(ev[0]);
	}
}

static void op_unknown(struct worker *w, struct desc *d)
{
	unsigned long cmd;
	char buf[256] = { 0 };

	switch (rnd(w, 4)) {
	case 0:	/* the right magic, an unused number */
		cmd = _IOWR(MRMON_IOC_MAGIC, 5 + rnd(w, 251), struct mrmon_batch);
		break;
	case 1:	/* a known number with the wrong size */
		cmd = _IOC(_IOC_READ | _IOC_WRITE, MRMON_IOC_MAGIC, rnd(w, 5), 8 + 8 * rnd(w, 20));
		if (cmd == MRMON_IOC_HANDSHAKE || cmd == MRMON_IOC_SETUP ||
		    cmd == MRMON_IOC_WATCH || cmd == MRMON_IOC_UNWATCH ||
		    cmd == MRMON_IOC_REVALIDATE)
			cmd ^= _IOC(_IOC_WRITE, 0, 0, 0);
		break;
	case 2:	/* ABI 1's commands (magic 0xB7), right sizes and all */
		cmd = _IOC(_IOC_READ | _IOC_WRITE, 0xB7, rnd(w, 4),
			   rnd(w, 2) ? sizeof(struct mrmon_handshake) : sizeof(struct mrmon_batch));
		break;
	default:
		cmd = (unsigned int)rand_r(&w->seed);
		if (_IOC_TYPE(cmd) == MRMON_IOC_MAGIC)
			cmd ^= _IOC(0, 1, 0, 0);
	}
	EXPECT("unknown command", mon_ioctl(d->fd, cmd, buf), -ENOTTY);
}

/* The region ops: the mm changes under the watches. */
static void op_memory(struct worker *w)
{
	struct region *r = &w->r[rnd(w, REGIONS)];
	size_t off = rnd(w, REGION_PAGES) * PAGE, n = (1 + rnd(w, 4)) * PAGE;
	void *q;

	if (!rnd(w, 3)) {
		/* Split the big window's VMA and merge it back. */
		char *page = w->big + (256 + rnd(w, 256)) * PAGE;

		mprotect(page, PAGE, PROT_READ);
		mprotect(page, PAGE, PROT_READ | PROT_WRITE);
		return;
	}
	if (!r->p) {
		r->len = REGION_PAGES * PAGE;
		r->p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (r->p == MAP_FAILED)
			r->p = NULL;
		else
			memset(r->p, 1, r->len);
		return;
	}
	if (off + n > r->len)
		n = r->len - off;
	switch (rnd(w, 6)) {
	case 0:
		munmap(r->p, r->len);
		r->p = NULL;
		break;
	case 1:
		/* Replaces in one call: a munmap first would leave a hole
		 * another thread's mmap could take. */
		mmap(r->p + off, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		break;
	case 2:
		q = mremap(r->p, r->len, r->len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   mmap(NULL, r->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
		if (q != MAP_FAILED)
			r->p = q;
		break;
	case 3:
		madvise(r->p + off, n, MADV_DONTNEED);
		break;
	case 4:
		mprotect(r->p + off, n, PROT_READ);
		mprotect(r->p + off, n, PROT_READ | PROT_WRITE);
		break;
	default:
		memset(r->p + off, 2, n);
	}
}

/* The child of a fork: every inherited descriptor refuses it. */
static int forked_child(struct worker *w)
{
	int before = test_failures;
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_event ev;
	unsigned char vec;
	void *p;

	for (int i = 0; i < OWN; i++) {
		struct desc *d = &w->d[i];
		struct pollfd pfd = { .fd = d->fd, .events = POLLIN };

		if (d->fd < 0)
			continue;
		EXPECT("child handshake", mon_ioctl(d->fd, MRMON_IOC_HANDSHAKE, &hs), -EPERM);
		EXPECT("child revalidate", mon_ioctl(d->fd, MRMON_IOC_REVALIDATE, &hs), -EPERM);
		/* Unknown before foreign: ENOTTY, not EPERM. */
		EXPECT("child unknown command",
		       mon_ioctl(d->fd, _IOWR(MRMON_IOC_MAGIC, 5, struct mrmon_batch), &hs), -ENOTTY);
		EXPECT("child read", read(d->fd, &ev, sizeof(ev)) < 0 ? -errno : 0, -EPERM);
		EXPECT("child mmap", try_mmap(d->fd, PAGE, PROT_READ, MAP_SHARED, 0, &p), -EPERM);
		CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR));
		if (d->map && !(mincore(d->map, PAGE, &vec) < 0 && errno == ENOMEM)) {
			fprintf(stderr, "child: the map %p (%zu bytes) is there: %s\n",
				d->map, d->map_len, strerror(errno));
			test_failures++;
		}
		close(d->fd);
	}
	return test_failures != before;
}

static void op_fork(struct worker *w)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(forked_child(w));
	CHECK(pid > 0);
	if (pid > 0) {
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));
		w->forks++;
	}
}

/* A shared descriptor: any call, any moment, the loose oracle. */
static void op_shared(struct worker *w)
{
	int fd = SHARED_FD + rnd(w, SHARED), nfd;
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_setup su = { .nslots = 1 + rnd(w, 64), .nevents = 1 + rnd(w, 8) };
	struct mrmon_range r = { .start = pick_addr(w), .len = 1 + rnd(w, 3 * PAGE) };
	struct mrmon_unwatch_entry u = { .slot = rnd(w, 64), .expected = rnd(w, 64) << 1 | 1 };
	struct mrmon_batch b = { .count = 1 };
	struct mrmon_event ev[4];
	void *p = NULL;
	int rc;

	switch (rnd(w, 9)) {
	case 0:
		/* dup3 replaces the file under the number atomically: the
		 * number never names anything but an mrmon descriptor. */
		nfd = open("/dev/mrmon", O_RDWR | O_CLOEXEC | O_NONBLOCK);
		EXPECT("shared open", nfd < 0 ? -errno : 0, 0);
		if (nfd >= 0) {
			EXPECT("shared dup3", sys(dup3(nfd, fd, O_CLOEXEC)), 0);
			close(nfd);
		}
		w->opens++;
		return;
	case 1:
		EXPECT("shared handshake", mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), LOOSE);
		return;
	case 2:
		EXPECT("shared setup", mon_ioctl(fd, MRMON_IOC_SETUP, &su), LOOSE);
		return;
	case 3:
		b.entries = (uintptr_t)&r;
		EXPECT("shared watch", mon_ioctl(fd, MRMON_IOC_WATCH, &b), LOOSE);
		return;
	case 4:
		b.entries = (uintptr_t)&u;
		EXPECT("shared unwatch", mon_ioctl(fd, MRMON_IOC_UNWATCH, &b), LOOSE);
		return;
	case 5:
		rc = read(fd, ev, sizeof(ev)) < 0 ? -errno : 0;
		EXPECT("shared read", rc, LOOSE);
		return;
	case 6:
		b.entries = (uintptr_t)&u;
		EXPECT("shared revalidate", mon_ioctl(fd, MRMON_IOC_REVALIDATE, &b), LOOSE);
		return;
	default:
		rc = try_mmap(fd, PAGE, PROT_READ, MAP_SHARED, 0, &p);
		EXPECT("shared mmap", rc, LOOSE);
		if (!rc)
			munmap(p, PAGE);
	}
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < OWN; i++)
		w->d[i].fd = -1;
	w->ro_entry = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(w->ro_entry != MAP_FAILED);
	w->big_raw = mmap(NULL, 4ul << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(w->big_raw != MAP_FAILED);
	w->big = (char *)(((uintptr_t)w->big_raw + (2ul << 20) - 1) & ~((2ul << 20) - 1));
	/* 4 KiB pages, only the watched ones present (a fork copies little):
	 * their page table is what a split of the window CLEARs. */
	madvise(w->big_raw, 4ul << 20, MADV_NOHUGEPAGE);
	memset(w->big, 1, BIG_PAGES * PAGE);
	w->ring_ok = !io_uring_queue_init(4, &w->ring, 0);
	CHECK(w->ring_ok);
	for (long n = 0; n < w->ops; n++) {
		struct desc *d = &w->d[rnd(w, OWN)];
		unsigned int k = rnd(w, 1000);

		if (k < 2) {
			op_fork(w);
			continue;
		}
		if (k < 150) {
			op_memory(w);
			continue;
		}
		if (k < 250) {
			op_shared(w);
			continue;
		}
		if (d->fd < 0 || k < 280) {
			op_open(w, d);
			continue;
		}
		if (k < 330)
			op_handshake(w, d);
		else if (k < 400)
			op_setup(w, d);
		else if (k < 480)
			op_mmap(w, d);
		else if (k < 645)
			op_watch(w, d);
		else if (k < 660)
			op_register(w, d);
		else if (k < 740)
			op_revalidate(w, d);
		else if (k < 840)
			op_unwatch(w, d);
		else if (k < 960)
			op_read(w, d);
		else
			op_unknown(w, d);
	}
	for (int i = 0; i < OWN; i++)
		if (w->d[i].fd >= 0) {
			close(w->d[i].fd);
			desc_forget(&w->d[i]);
		}
	for (int i = 0; i < REGIONS; i++)
		if (w->r[i].p)
			munmap(w->r[i].p, w->r[i].len);
	if (w->ring_ok)
		io_uring_queue_exit(&w->ring);
	munmap(w->ro_entry, PAGE);
	munmap(w->big_raw, 4ul << 20);
	return NULL;
}

static void ro_structs(void)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_range r = { .start = (uintptr_t)ro_page, .len = PAGE };
	struct mrmon_batch b = { .entries = (uintptr_t)ro_page + 256, .count = 1 };
	struct mrmon_setup su = { .nslots = 1, .nevents = 1 };

	memcpy(ro_page, &hs, sizeof(hs));
	memcpy(ro_page + 256, &r, sizeof(r));
	memcpy(ro_page + 512, &b, sizeof(b));
	memcpy(ro_page + 768, &su, sizeof(su));
	mprotect(ro_page, PAGE, PROT_READ);
}

static int fuzz(long total, unsigned int seed)
{
	struct worker w[THREADS];
	pthread_t t[THREADS];
	long opens = 0, watches = 0, events = 0, forks = 0, not_armed = 0;
	long registers = 0, invalid = 0;

	ro_page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	none_page = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_structs();
	memset(w, 0, sizeof(w));
	for (int i = 0; i < THREADS; i++) {
		w[i].seed = seed * 7919 + i;
		w[i].ops = total / THREADS;
		CHECK_EQ(pthread_create(&t[i], NULL, worker_run, &w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		opens += w[i].opens;
		watches += w[i].watches;
		events += w[i].events;
		forks += w[i].forks;
		not_armed += w[i].not_armed;
		registers += w[i].registers;
		invalid += w[i].rechecks_invalid;
	}
	for (int i = 0; i < SHARED; i++)
		close(SHARED_FD + i);
	*fuzz_opens = opens;
	printf("%ld operations (seed %u): %ld opens, %ld watches (%ld not armed), %ld registered "
	       "(%ld re-checks invalid), %ld events read, %ld forks, %d bad results\n",
	       total, seed, opens, watches, not_armed, registers, invalid, events, forks,
	       test_failures);
	return test_result();
}

/* Kernel memory the module holds, and what it must give back. */
struct mem {
	long refs, vmaps, slab, used;
	long anon, ptables, stacks, percpu;
};

static long meminfo(const char *key)
{
	char line[128];
	long v = -1, x;
	size_t k = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k) && line[k] == ':' && sscanf(line + k + 1, "%ld", &x) == 1)
			v = x;
	if (f)
		fclose(f);
	return v;
}

/* Empty slabs back to the page allocator, and on a KASAN kernel the
 * freed objects out of its quarantine (kmem_cache_shrink() flushes a
 * cache's share): without it the debug kernel's slab grew by 3.3 MB over
 * the fuzz, all of it objects mrmon had freed. */
static void slabs_shrink(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		f = fopen(path, "w");
		if (f) {
			fputs("1\n", f);
			fclose(f);
		}
	}
	if (d)
		closedir(d);
}

static struct mem measure(void)
{
	struct mem s = { .refs = -1, .vmaps = 0 };
	char line[512];
	FILE *f;

	f = fopen("/proc/sys/vm/drop_caches", "w");
	if (f) {
		fputs("3\n", f);	/* reclaimable slab (dentries of dead pids) */
		fclose(f);
	}
	usleep(300000);	/* RCU-deferred frees */
	slabs_shrink();
	f = fopen("/sys/module/mrmon/refcnt", "r");
	if (f) {
		if (fscanf(f, "%ld", &s.refs) != 1)
			s.refs = -1;
		fclose(f);
	}
	f = fopen("/proc/vmallocinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[mrmon]"))
			s.vmaps++;
	if (f)
		fclose(f);
	s.slab = meminfo("Slab");
	s.used = meminfo("MemTotal") - meminfo("MemFree") - meminfo("Cached") - meminfo("Buffers");
	s.anon = meminfo("AnonPages");
	s.ptables = meminfo("PageTables");
	s.stacks = meminfo("KernelStack");
	s.percpu = meminfo("Percpu");
	return s;
}

static void report(const char *what, struct mem a, struct mem b)
{
	printf("%-26s module refs %+ld, [mrmon] vmalloc areas %+ld, slab %+ld kB, used %+ld kB "
	       "(anon %+ld, page tables %+ld, stacks %+ld, percpu %+ld)\n",
	       what, b.refs - a.refs, b.vmaps - a.vmaps, b.slab - a.slab, b.used - a.used,
	       b.anon - a.anon, b.ptables - a.ptables, b.stacks - a.stacks, b.percpu - a.percpu);
}

static void write_param(const char *name, unsigned int v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/mrmon/parameters/%s", name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%u\n", v);
		CHECK_EQ(fclose(f), 0);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	static struct mon held[HELD];
	long total = getenv("MRMON_FUZZ_OPS") ? atol(getenv("MRMON_FUZZ_OPS")) : 100000;
	unsigned int seed = getenv("MRMON_FUZZ_SEED") ? (unsigned int)atol(getenv("MRMON_FUZZ_SEED"))
						      : (unsigned int)time(NULL);
	struct mon m;
	struct mem a, b;
	long bound_kb;
	int status;
	double t0;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (mon_open(&m, 1, 1))
		SKIP("cannot set up /dev/mrmon");
	limits = m.hs;
	{
		uint32_t slot;
		uint64_t e;

		task_size = mon_watch(&m, (void *)(1ul << 47), PAGE, 0, &slot, &e) ? 1ul << 47 : 1ul << 56;
		task_size -= PAGE;
	}
	mon_close(&m);
	/* Small limits: SETUP at the limit stays cheap in a 1 GiB guest. */
	write_param("max_slots", LIMIT_SLOTS);
	write_param("max_events", LIMIT_EVENTS);
	limits.max_slots = LIMIT_SLOTS;

	fuzz_opens = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	a = measure();
	if (a.refs < 0 || fuzz_opens == MAP_FAILED)
		SKIP("mrmon not loaded");
	t0 = now_s();
	pid = fork();
	if (pid == 0)
		_exit(fuzz(total, seed));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));
	printf("fuzz: %.1f s\n", now_s() - t0);
	b = measure();
	report("after the fuzz:", a, b);
	CHECK_EQ(b.refs, a.refs);
	CHECK_EQ(b.vmaps, a.vmaps);
	/* A leak of one context per open would be opens * 256 bytes. */
	bound_kb = *fuzz_opens * CTX_BYTES / 1024;
	printf("slab bound: %ld kB (%ld opens)\n", bound_kb, *fuzz_opens);
	CHECK(b.slab - a.slab < bound_kb);

	/* Controls: the same measures see one context per open kept
	 * (descriptors only opened), and HELD set-up descriptors kept. */
	struct rlimit rl = { *fuzz_opens + HELD + 64, *fuzz_opens + HELD + 64 };
	int *plain = calloc(*fuzz_opens, sizeof(int));

	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (long i = 0; plain && i < *fuzz_opens; i++)
		plain[i] = open("/dev/mrmon", O_RDWR | O_CLOEXEC);
	b = measure();
	report("holding opens (control):", a, b);
	CHECK_EQ(b.refs, a.refs + *fuzz_opens);
	CHECK(b.slab - a.slab >= bound_kb);
	for (int i = 0; i < HELD; i++)
		CHECK_EQ(mon_open(&held[i], LIMIT_SLOTS, LIMIT_EVENTS), 0);
	b = measure();
	report("and 64 set up (control):", a, b);
	CHECK_EQ(b.refs, a.refs + *fuzz_opens + HELD);
	CHECK(b.vmaps >= a.vmaps + HELD);
	for (long i = 0; plain && i < *fuzz_opens; i++)
		close(plain[i]);
	for (int i = 0; i < HELD; i++)
		mon_close(&held[i]);
	free(plain);

	write_param("max_slots", m.hs.max_slots);
	write_param("max_events", m.hs.max_events);
	return test_result();
}
