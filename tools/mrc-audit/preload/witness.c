/* SPDX-License-Identifier: MIT */
/*
 * witness.c - the kernel monitor as the audit's witness: one /dev/mrmon
 * descriptor per process, one watch per registration (cookie: the
 * registration's id), the words mapped read-only, the event queue read
 * for the causes.  Every call here runs under mra.lock.
 *
 * Without the module (or with an ABI this library does not speak) there
 * is no witness: registrations are still recorded and timed, uses are
 * counted, nothing can be called stale, and the report says why.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "audit.h"

#define MRA_DEV		"/dev/mrmon"
#define MRA_SLOTS	65536u
#define MRA_EVENTS	4096u

static void mra_witness_none(const char *fmt, const char *what, int err)
{
	snprintf(mra.w.why, sizeof(mra.w.why), fmt, what, strerror(err));
}

static int mra_witness_setup(int fd, const struct mrmon_handshake *hs)
{
	struct mrmon_setup su;
	void *map;

	memset(&su, 0, sizeof(su));
	su.nslots = hs->max_slots < MRA_SLOTS ? hs->max_slots : MRA_SLOTS;
	su.nevents = hs->max_events < MRA_EVENTS ? hs->max_events : MRA_EVENTS;
	if (ioctl(fd, MRMON_IOC_SETUP, &su))
		return -errno;
	map = mmap(NULL, su.map_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	mra.w.header = map;
	mra.w.words = (const uint64_t *)((const char *)map + hs->header_size);
	mra.w.nslots = su.nslots;
	return 0;
}

int mra_witness_open(void)
{
	struct mrmon_handshake hs;
	int fd, rc;

	mra.w.fd = -1;
	fd = open(MRA_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		mra_witness_none("%s: %s (load mrmon.ko; docs/mrmon.md)", MRA_DEV, -rc);
		return rc;
	}
	rc = mra_abi_handshake(fd, &hs);
	if (rc == -EPROTONOSUPPORT) {
		snprintf(mra.w.why, sizeof(mra.w.why),
			 "%s speaks ABI %u, this mrc-audit ABI %u", MRA_DEV,
			 hs.abi_version, MRMON_ABI_VERSION);
	} else if (rc) {
		mra_witness_none("%s: handshake: %s", MRA_DEV, -rc);
	} else if ((rc = mra_witness_setup(fd, &hs))) {
		mra_witness_none("%s: setup: %s", MRA_DEV, -rc);
	}
	if (rc) {
		close(fd);
		return rc;
	}
	mra.w.fd = fd;
	mra.w.abi = hs.abi_version;
	return 0;
}

/* 0 armed, 1 not armed (invalid at once), or -errno (no watch). */
int mra_witness_watch(uintptr_t va, size_t len, uint64_t cookie, uint32_t *slot, uint64_t *expected)
{
	struct mrmon_range r = { .start = va, .len = len, .cookie = cookie,
				 .flags = mra_abi_watch_flags() };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	int rc;

	if (mra.w.fd < 0)
		return -ENODEV;
	do {
		rc = ioctl(mra.w.fd, MRMON_IOC_WATCH, &b) ? -errno : 0;
	} while (rc == -EINTR);
	if (rc) {
		mra.w.watch_errors++;
		return rc;
	}
	*slot = r.slot;
	*expected = r.expected;
	return mra_abi_armed(&r) ? 0 : 1;
}

void mra_witness_unwatch(uint32_t slot, uint64_t expected)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .expected = expected };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };

	if (mra.w.fd >= 0 && ioctl(mra.w.fd, MRMON_IOC_UNWATCH, &b) &&
	    !mra_abi_unwatch_gone(errno))
		mra.w.unwatch_errors++;
}

/* Whether events are queued (the header's `pending`): one load. */
bool mra_witness_pending(void)
{
	return mra.w.fd >= 0 && __atomic_load_n(&mra.w.header->pending, __ATOMIC_ACQUIRE);
}

/* Events queued now (non-blocking), or 0. */
int mra_witness_read(struct mrmon_event *ev, unsigned max)
{
	ssize_t n;

	if (mra.w.fd < 0)
		return 0;
	n = read(mra.w.fd, ev, max * sizeof(*ev));
	if (n <= 0)
		return 0;
	return (int)(n / (ssize_t)sizeof(*ev));
}
