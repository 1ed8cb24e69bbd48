/* SPDX-License-Identifier: MIT */
/*
 * witness.c - the kernel monitor as the audit's witness: one /dev/mrmon
 * descriptor per process, one watch per registration (cookie: the
 * registration's id), the words mapped read-only, the event queue read
 * for the causes.  Every call here runs under mra.lock.
 *
 * Without the module (or with an ABI this library does not speak) there
 * is no witness unless the user asks for the userfaultfd one
 * (MRC_AUDIT_WITNESS=uffd, witness_uffd.c: weaker, and it takes the
 * registered ranges from any userfaultfd of the program's own, so it is
 * never taken behind the user's back).  With none, registrations are
 * still recorded and timed, uses are counted, nothing can be called
 * stale, and the report says why and that the userfaultfd one exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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

static int mra_mrmon_open(void)
{
	struct mrmon_handshake hs;
	int fd, rc;

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
	mra.w.kind = MRA_WITNESS_MRMON;
	return 0;
}

/* The module, or the userfaultfd witness when asked for. */
int mra_witness_open(void)
{
	const char *want = getenv("MRC_AUDIT_WITNESS");
	size_t len;
	int rc = -ENODEV;

	mra.w.fd = -1;
	mra.w.kind = MRA_WITNESS_NONE;
	if (want && *want && strcmp(want, "mrmon") && strcmp(want, "uffd") &&
	    strcmp(want, "none")) {
		fprintf(stderr, "mrc-audit: MRC_AUDIT_WITNESS=%s: not mrmon, uffd or none; "
			"using the default\n", want);
		want = NULL;
	}
	if (want && !strcmp(want, "none")) {
		snprintf(mra.w.why, sizeof(mra.w.why), "MRC_AUDIT_WITNESS=none");
		return -ENODEV;
	}
	if (!want || !*want || !strcmp(want, "mrmon")) {
		rc = mra_mrmon_open();
		len = strlen(mra.w.why);
		if (rc && len + 1 < sizeof(mra.w.why))
			snprintf(mra.w.why + len, sizeof(mra.w.why) - len,
				 "; MRC_AUDIT_WITNESS=uffd gives a weaker witness (docs/audit.md)");
		return rc;
	}
	snprintf(mra.w.why, sizeof(mra.w.why), "MRC_AUDIT_WITNESS=uffd");
	len = strlen(mra.w.why);
	rc = mra_uwitness_open(&mra.w.fd, mra.w.why + len + (len ? 2 : 0),
			       sizeof(mra.w.why) - len - (len ? 2 : 0));
	if (len)
		memcpy(mra.w.why + len, rc ? "; " : "\0", 2);
	if (rc) {
		mra.w.fd = -1;
		return rc;
	}
	mra.w.kind = MRA_WITNESS_UFFD;
	mra.w.words = mra_uwitness_words();
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
	if (mra.w.kind == MRA_WITNESS_UFFD) {
		rc = mra_uwitness_watch(va, len, cookie, slot, expected);
		if (rc)
			mra.w.watch_errors++;
		return rc;
	}
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

	if (mra.w.kind == MRA_WITNESS_UFFD)
		mra_uwitness_unwatch(slot);
	else if (mra.w.fd >= 0 && ioctl(mra.w.fd, MRMON_IOC_UNWATCH, &b) &&
	    !mra_abi_unwatch_gone(errno))
		mra.w.unwatch_errors++;
}

/* Whether events are queued (the header's `pending`): one load. */
bool mra_witness_pending(void)
{
	if (mra.w.kind == MRA_WITNESS_UFFD)
		return mra_uwitness_pending();
	return mra.w.fd >= 0 && __atomic_load_n(&mra.w.header->pending, __ATOMIC_ACQUIRE);
}

/* Events queued now (non-blocking), or 0. */
int mra_witness_read(struct mrmon_event *ev, unsigned max)
{
	ssize_t n;

	if (mra.w.fd < 0)
		return 0;
	if (mra.w.kind == MRA_WITNESS_UFFD)
		return mra_uwitness_read(ev, max);
	n = read(mra.w.fd, ev, max * sizeof(*ev));
	if (n <= 0)
		return 0;
	return (int)(n / (ssize_t)sizeof(*ev));
}
