/* SPDX-License-Identifier: MIT */
/*
 * mrmon_test.h - helpers for the module's guest tests: open, handshake,
 * setup and map /dev/mrmon; watch and unwatch one range; read
 * events; run a check as uid 65534.  Functions return 0 or -errno, like
 * the library.
 */
#ifndef MRMON_TEST_H
#define MRMON_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uapi/linux/mrmon.h>
#include "mrmon_priv.h"
#include "testutil.h"

#define PAGE 4096ul

/*
 * Transparent huge pages configured?  Not on PREEMPT_RT (6.1-rt, 6.12-rt:
 * TRANSPARENT_HUGEPAGE depends on !PREEMPT_RT): there a VMA split sends no
 * CLEAR (vma_adjust_trans_huge() is a stub), and MADV_HUGEPAGE and
 * MADV_NOHUGEPAGE fail with EINVAL.
 */
static inline int mon_have_thp(void)
{
	return access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
}

struct mon {
	int fd;
	void *map;
	size_t map_size;
	const struct mrmon_header *hdr;
	const uint64_t *words;
	struct mrmon_handshake hs;
};

static inline int mon_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/* Skips the test when the module is not loaded. */
static inline int mon_open(struct mon *m, uint32_t nslots, uint32_t nevents)
{
	struct mrmon_setup su = { .nslots = nslots, .nevents = nevents };
	int rc;

	memset(m, 0, sizeof(*m));
	m->fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (m->fd < 0) {
		if (errno == ENOENT)
			SKIP("/dev/mrmon missing: load kmod/mrmon.ko (make check-guest does)");
		return -errno;
	}
	/* MRMON_TEST_ABI=2 runs a regression test against the ABI-2 module
	 * (1dca6a6) to see it fail there: the structs are the same. */
	m->hs.abi_version = getenv("MRMON_TEST_ABI") ? (uint32_t)atoi(getenv("MRMON_TEST_ABI"))
						     : MRMON_ABI_VERSION;
	rc = mon_ioctl(m->fd, MRMON_IOC_HANDSHAKE, &m->hs);
	if (!rc)
		rc = mon_ioctl(m->fd, MRMON_IOC_SETUP, &su);
	if (rc)
		return rc;
	m->map_size = su.map_size;
	m->map = mmap(NULL, su.map_size, PROT_READ, MAP_SHARED, m->fd, 0);
	if (m->map == MAP_FAILED)
		return -errno;
	m->hdr = m->map;
	m->words = (const uint64_t *)((char *)m->map + m->hs.header_size);
	return 0;
}

static inline void mon_close(struct mon *m)
{
	if (m->map && m->map != MAP_FAILED)
		munmap(m->map, m->map_size);
	close(m->fd);
}

/* WATCH one range with MRMON_RANGE_* flags. */
static inline int mon_watch_flags(struct mon *m, const void *addr, size_t len,
				  uint64_t cookie, uint32_t flags, uint32_t *slot,
				  uint64_t *expected)
{
	struct mrmon_range r = { .start = (uintptr_t)addr, .len = len, .cookie = cookie,
				 .flags = flags };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	int rc = mon_ioctl(m->fd, MRMON_IOC_WATCH, &b);

	if (!rc) {
		*slot = r.slot;
		*expected = r.expected;
	}
	return rc;
}

static inline int mon_watch(struct mon *m, const void *addr, size_t len,
			    uint64_t cookie, uint32_t *slot, uint64_t *expected)
{
	return mon_watch_flags(m, addr, len, cookie, 0, slot, expected);
}

static inline int mon_unwatch(struct mon *m, uint32_t slot, uint64_t expected)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .expected = expected };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };

	return mon_ioctl(m->fd, MRMON_IOC_UNWATCH, &b);
}

/* The library's hit check. */
static inline int mon_valid(const struct mon *m, uint32_t slot, uint64_t expected)
{
	return __atomic_load_n(&m->words[slot], __ATOMIC_ACQUIRE) == expected;
}

/* Events available now (non-blocking); returns the count or -errno. */
static inline int mon_events(struct mon *m, struct mrmon_event *ev, int max)
{
	ssize_t got = read(m->fd, ev, (size_t)max * sizeof(*ev));

	if (got < 0)
		return errno == EAGAIN ? 0 : -errno;
	return (int)(got / (ssize_t)sizeof(*ev));
}

static inline void *mon_map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, len);
	return p;
}

#define MON_HUGE (2ul << 20)

/*
 * `len` bytes of anonymous memory starting on a 2 MiB boundary, marked
 * MADV_HUGEPAGE (so a THP backs each whole 2 MiB window where the kernel
 * can) and filled with `fill`.  *raw gets the mapping to munmap(), `len`
 * plus 2 MiB long.  NULL if mmap failed.
 */
static inline char *mon_map_window(size_t len, int fill, char **raw)
{
	char *p;

	*raw = mmap(NULL, len + MON_HUGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)*raw + MON_HUGE - 1) & ~(MON_HUGE - 1));
	madvise(p, len, MADV_HUGEPAGE);
	memset(p, fill, len);
	return p;
}

/*
 * Forks a process that first becomes uid 65534 (no groups, no
 * capabilities: mrmon_priv.h's priv_become()), keeping the limits it
 * inherits, then exits with child(arg), its own verdict (2 if it could
 * not become uid 65534).  The finding tests of issue 24 run their
 * attacker this way.  Returns the pid, or -errno.
 */
static inline pid_t mon_spawn_as_nobody(int (*child)(void *arg), void *arg)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		test_failures = 0;
		if (priv_become(PRIV_NOBODY))
			_exit(2);
		_exit(child(arg));
	}
	return pid;
}

/* Waits for a child: its exit status, or -1 if it did not exit normally. */
static inline int mon_child_status(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* child(arg) as uid 65534 (mon_spawn_as_nobody()), waited for: its exit
 * status (0: passed), or -1. */
static inline int mon_run_as_nobody(int (*child)(void *arg), void *arg)
{
	return mon_child_status(mon_spawn_as_nobody(child, arg));
}

#endif
