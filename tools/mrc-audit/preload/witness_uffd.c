/* SPDX-License-Identifier: MIT */
/*
 * witness_uffd.c - the weaker witness, where /dev/mrmon is absent: a
 * userfaultfd that reports the unmaps (UNMAP), discards (REMOVE) and moves
 * (REMAP) of the registered ranges.  It gives the audit what witness.c
 * gives it from the module, so regs.c does not know which one runs: a
 * word per watch (here in this process's memory, cleared by the handler
 * thread), events in the module's format (struct mrmon_event, queued
 * here), and a descriptor that polls readable while events are queued (an
 * eventfd, for the reporter thread).
 *
 * What it cannot see (docs/audit.md, "Witnesses"): truncation or hole
 * punching of a mapped file, by this process or another; io_uring's
 * madvise and ftruncate; remap_file_pages(); MADV_REMOVE through another
 * mapping of the file.  And it is late: the kernel queues the event once
 * the unmapping call released mmap_lock, so a use by another thread in
 * that moment is counted valid.
 *
 * Ranges are registered in write-protect mode with no page protected, so
 * nothing faults: the program's accesses are unchanged.  A registration
 * splits the VMA around the range (a later mremap() of the whole mapping
 * may fail with EFAULT); an unwatch leaves the range registered, since
 * another watch may share its VMA.
 *
 * Locks: uw.lock (a mutex, never held across a system call) guards the
 * slots, the words' generations and the event queue; callers of the
 * mra_uwitness_* functions hold mra.lock, the handler thread never takes
 * it.  Every signal is blocked while an application thread holds uw.lock,
 * so a handler that unmaps cannot wait for the handler thread while its
 * own thread holds the lock that thread needs.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "audit.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define UW_SLOTS	16384u
#define UW_EVENTS	4096u

struct uw_slot {
	uintptr_t start, end;	/* page-rounded */
	uint64_t cookie, gen;
	bool used;
};

static struct {
	pthread_mutex_t lock;
	int uffd, efd;
	uint64_t *words;
	struct uw_slot *slots;
	uint32_t *free_slots, nfree;
	uint32_t high;		/* slots below this have been used: the handler's scan */
	uint64_t next_gen;
	struct mrmon_event ring[UW_EVENTS];
	uint32_t head, count;
	bool overflow;
	uint64_t pending;	/* atomic: events queued, for mra_witness_pending() */
} uw = { .lock = PTHREAD_MUTEX_INITIALIZER, .uffd = -1, .efd = -1 };

static void uw_lock_app(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&uw.lock);
}

static void uw_unlock_app(const sigset_t *old)
{
	pthread_mutex_unlock(&uw.lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Under uw.lock: one event for the reader, or the overflow flag. */
static void uw_queue(const struct uw_slot *s, uint32_t slot, uintptr_t start, uintptr_t end,
		     uint32_t cause)
{
	struct mrmon_event *ev;

	if (uw.count == UW_EVENTS) {
		uw.overflow = true;
		return;
	}
	ev = &uw.ring[(uw.head + uw.count++) % UW_EVENTS];
	*ev = (struct mrmon_event){ .cookie = s->cookie, .slot = slot, .cause = cause,
				    .generation = s->gen,
				    .start = start > s->start ? start : s->start,
				    .end = end < s->end ? end : s->end };
}

/* The handler thread: every watch [start, end) overlaps loses its word.
 * A linear pass over the slots used so far (the free stack hands out the
 * lowest first): the audit watches one range per registration, and a
 * program keeps few registrations. */
static void uw_invalidate(uintptr_t start, uintptr_t end, uint32_t cause)
{
	uint64_t wake = 1;
	bool queued = false;

	pthread_mutex_lock(&uw.lock);
	for (uint32_t i = 0; i < uw.high; i++) {
		struct uw_slot *s = &uw.slots[i];

		if (!s->used || s->end <= start || s->start >= end ||
		    !(__atomic_load_n(&uw.words[i], __ATOMIC_RELAXED) & 1))
			continue;
		__atomic_store_n(&uw.words[i], s->gen << 1, __ATOMIC_RELEASE);
		uw_queue(s, i, start, end, cause);
		queued = true;
	}
	if (queued)
		__atomic_store_n(&uw.pending, (uint64_t)uw.count + uw.overflow, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&uw.lock);
	if (queued && write(uw.efd, &wake, sizeof(wake)) < 0)
		return;	/* the counter is already non-zero */
}

static void uw_event(const struct uffd_msg *m)
{
	switch (m->event) {
	case UFFD_EVENT_UNMAP:
		uw_invalidate(m->arg.remove.start, m->arg.remove.end, MRMON_CAUSE_UNMAP);
		break;
	case UFFD_EVENT_REMOVE:
		uw_invalidate(m->arg.remove.start, m->arg.remove.end, MRMON_CAUSE_CLEAR);
		break;
	case UFFD_EVENT_REMAP:
		uw_invalidate(m->arg.remap.from, m->arg.remap.from + m->arg.remap.len,
			      MRMON_CAUSE_UNMAP);
		break;
	default:
		break;	/* page faults cannot happen: nothing is protected */
	}
}

static void *uw_handler(void *arg)
{
	struct pollfd p = { .fd = uw.uffd, .events = POLLIN };
	struct uffd_msg m[16];
	sigset_t all;
	ssize_t n;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return NULL;
		n = read(uw.uffd, m, sizeof(m));
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return NULL;	/* a forked child's copy, or closed */
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(m[0]); i++)
			uw_event(&m[i]);
	}
}

static int uw_fd(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

	if (fd < 0 && errno == EINVAL)	/* before 5.11: no USER_MODE_ONLY */
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* 0 and the eventfd the reporter polls in *fd, or -errno with why. */
int mra_uwitness_open(int *fd, char *why, size_t why_len)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_EVENT_UNMAP |
				  UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP };
	pthread_t t;
	int rc;

	rc = uw_fd();
	if (rc < 0) {
		snprintf(why, why_len, "userfaultfd: %s (vm.unprivileged_userfaultfd=0?)",
			 strerror(-rc));
		return rc;
	}
	uw.uffd = rc;
	if (ioctl(uw.uffd, UFFDIO_API, &api) < 0) {
		rc = -errno;
		snprintf(why, why_len, "userfaultfd: UFFDIO_API: %s", strerror(-rc));
		goto fail;
	}
	uw.words = calloc(UW_SLOTS, sizeof(*uw.words));
	uw.slots = calloc(UW_SLOTS, sizeof(*uw.slots));
	uw.free_slots = malloc(UW_SLOTS * sizeof(*uw.free_slots));
	uw.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!uw.words || !uw.slots || !uw.free_slots || uw.efd < 0) {
		rc = -ENOMEM;
		snprintf(why, why_len, "userfaultfd witness: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < UW_SLOTS; i++)
		uw.free_slots[i] = UW_SLOTS - 1 - i;
	uw.nfree = UW_SLOTS;
	rc = -pthread_create(&t, NULL, uw_handler, NULL);
	if (rc) {
		snprintf(why, why_len, "userfaultfd witness: thread: %s", strerror(-rc));
		goto fail;
	}
	pthread_detach(t);
	*fd = uw.efd;
	return 0;
fail:
	close(uw.uffd);
	if (uw.efd >= 0)
		close(uw.efd);
	uw.uffd = uw.efd = -1;
	return rc;
}

const uint64_t *mra_uwitness_words(void)
{
	return uw.words;
}

/* 0 armed, or -errno (no watch: a range userfaultfd cannot take). */
int mra_uwitness_watch(uintptr_t va, size_t len, uint64_t cookie, uint32_t *slot,
		       uint64_t *expected)
{
	uintptr_t start = va & ~4095ul, end = (va + len + 4095) & ~4095ul;
	struct uffdio_register reg = { .range = { start, end - start },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	sigset_t old;
	uint32_t i;
	int rc = 0;

	uw_lock_app(&old);
	if (!uw.nfree) {
		uw_unlock_app(&old);
		return -ENOSPC;
	}
	i = uw.free_slots[--uw.nfree];
	if (i >= uw.high)
		uw.high = i + 1;
	uw.slots[i] = (struct uw_slot){ start, end, cookie, ++uw.next_gen, true };
	*expected = uw.slots[i].gen << 1 | 1;
	__atomic_store_n(&uw.words[i], *expected, __ATOMIC_RELEASE);
	uw_unlock_app(&old);
	/* Armed first, then registered: an event in between is not sent to
	 * us at all (a change racing the registration is missed, as a use
	 * racing the unmap is). */
	if (ioctl(uw.uffd, UFFDIO_REGISTER, &reg) < 0) {
		rc = -errno;
		mra_uwitness_unwatch(i);
		return rc;
	}
	*slot = i;
	return 0;
}

void mra_uwitness_unwatch(uint32_t slot)
{
	sigset_t old;

	if (slot >= UW_SLOTS)
		return;
	uw_lock_app(&old);
	if (uw.slots[slot].used) {
		uw.slots[slot].used = false;
		__atomic_store_n(&uw.words[slot], 0, __ATOMIC_RELEASE);
		uw.free_slots[uw.nfree++] = slot;
	}
	uw_unlock_app(&old);
}

bool mra_uwitness_pending(void)
{
	return __atomic_load_n(&uw.pending, __ATOMIC_ACQUIRE) != 0;
}

/* Events queued now, as read() on /dev/mrmon would return them. */
int mra_uwitness_read(struct mrmon_event *ev, unsigned max)
{
	uint64_t drained;
	unsigned n = 0;
	sigset_t old;

	if (read(uw.efd, &drained, sizeof(drained)) < 0 && errno != EAGAIN)
		return 0;
	uw_lock_app(&old);
	while (n < max && uw.count) {
		ev[n++] = uw.ring[uw.head];
		uw.head = (uw.head + 1) % UW_EVENTS;
		uw.count--;
	}
	if (n < max && !uw.count && uw.overflow) {
		ev[n++] = (struct mrmon_event){ .cause = MRMON_CAUSE_OVERFLOW };
		uw.overflow = false;
	}
	__atomic_store_n(&uw.pending, (uint64_t)uw.count + uw.overflow, __ATOMIC_RELEASE);
	uw_unlock_app(&old);
	return (int)n;
}
