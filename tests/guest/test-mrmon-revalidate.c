/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-revalidate: finding 3 of issue 24 (REVALIDATE's safeguard was
 * a heuristic any user satisfies, and a PFN-equality oracle) stays fixed:
 * ABI 3 has no REVALIDATE.
 *
 *   - HANDSHAKE reports no REVALIDATE feature (bit 3), the ioctl answers
 *     EOPNOTSUPP, and ABI 2's SNAPSHOT flag on a WATCH entry is EINVAL.
 *   - The oracle round, as uid 65534 with default limits, 32 rounds on a
 *     fresh page each: WATCH, MADV_DONTNEED, touch (the same physical page
 *     often comes back), then 1,024 vmsplice() references to the page
 *     (plain references: nothing pinned), then REVALIDATE.  A round is
 *     "re-armed" when the word reads the watch's valid value again, or a
 *     REVALIDATE succeeded.  Must be 0 of 32.  On 1dca6a6 (ABI 2) it was
 *     32 of 32; control there: 0 of 32 without the references.
 *
 * Against an ABI-2 module (the original, to see it fail) the same rounds
 * run with ABI 2's handshake (mon_open) and SNAPSHOT flag (MRMON_TEST_ABI=2).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "mrmon_priv.h"
#include "mrmon_test.h"

#define ROUNDS 32
#define REFS 1024
#define PIPES 4			/* 256 pages each at 1 MiB */
#define ABI2_SNAPSHOT (1u << 0)
#define ABI2_FEATURE_REVALIDATE (1ull << 3)

static int abi2;

static int revalidate(struct mon *m, uint32_t slot, uint64_t *expected)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .expected = *expected };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };
	int rc = mon_ioctl(m->fd, MRMON_IOC_REVALIDATE, &b);

	if (!rc)
		*expected = e.expected;
	return rc;
}

/* One round; returns 1 if the watch was re-armed. */
static int round_once(struct mon *m, int refs, int pipes[PIPES][2])
{
	char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t expected = 0, e;
	uint32_t slot = 0;
	int rc, rearmed = 0;

	CHECK(p != MAP_FAILED);
	memset(p, 1, PAGE);
	rc = mon_watch_flags(m, p, PAGE, 1, abi2 ? ABI2_SNAPSHOT : 0, &slot, &expected);
	CHECK_EQ(rc, 0);
	CHECK(expected & 1);
	CHECK_EQ(madvise(p, PAGE, MADV_DONTNEED), 0);
	CHECK(!mon_valid(m, slot, expected));
	p[0] = 2;
	for (int i = 0; i < refs; i++) {
		struct iovec iov = { p, PAGE };

		CHECK_EQ(vmsplice(pipes[i % PIPES][1], &iov, 1, 0), (ssize_t)PAGE);
	}
	e = expected;
	rc = revalidate(m, slot, &e);
	if (abi2) {
		rearmed = !rc && e && mon_valid(m, slot, e);
	} else {
		CHECK_EQ(rc, -EOPNOTSUPP);
		rearmed = mon_valid(m, slot, expected);
		/* The watch is gone: UNWATCH says so, harmlessly. */
		CHECK_EQ(mon_unwatch(m, slot, expected), -ESTALE);
	}
	if (abi2)
		mon_unwatch(m, slot, e ? e : expected);
	/* Drop the references. */
	for (int i = 0; i < PIPES; i++) {
		char buf[PAGE];

		while (read(pipes[i][0], buf, sizeof(buf)) > 0)
			;
	}
	munmap(p, PAGE);
	return rearmed;
}

static int rounds(int refs)
{
	int pipes[PIPES][2], n = 0;
	struct mon m;
	struct mrmon_event ev[64];

	CHECK_EQ(mon_open(&m, 64, 64), 0);
	for (int i = 0; i < PIPES; i++) {
		CHECK_EQ(pipe2(pipes[i], O_NONBLOCK), 0);
		CHECK(fcntl(pipes[i][1], F_SETPIPE_SZ, 1 << 20) >= (1 << 20));
	}
	for (int r = 0; r < ROUNDS; r++) {
		n += round_once(&m, refs, pipes);
		while (mon_events(&m, ev, 64) > 0)
			;
	}
	for (int i = 0; i < PIPES; i++) {
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
	mon_close(&m);
	return n;
}

/* As uid 65534: the rounds with and without the references. */
static int oracle_rounds(void *arg)
{
	int with = rounds(REFS), without = rounds(0);

	printf("uid %d: re-armed %d of %d rounds with %d vmsplice references, "
	       "%d of %d without (ABI %d)\n", (int)getuid(), with, ROUNDS, REFS,
	       without, ROUNDS, abi2 ? 2 : MRMON_ABI_VERSION);
	CHECK_EQ(with, 0);
	CHECK_EQ(without, 0);
	return test_result();
}

int main(void)
{
	struct mrmon_range r = { 0 };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	struct mon m;
	char *p;

	abi2 = getenv("MRMON_TEST_ABI") && atoi(getenv("MRMON_TEST_ABI")) == 2;
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	if (!abi2) {
		CHECK_EQ(mon_open(&m, 64, 64), 0);
		CHECK(!(m.hs.features & ABI2_FEATURE_REVALIDATE));
		p = mon_map_anon(PAGE);
		CHECK(p != NULL);
		r = (struct mrmon_range){ .start = (uintptr_t)p, .len = PAGE, .flags = ABI2_SNAPSHOT };
		CHECK_EQ(mon_ioctl(m.fd, MRMON_IOC_WATCH, &b), -EINVAL);
		mon_close(&m);
	}

	CHECK_EQ(mon_run_as_nobody(oracle_rounds, NULL), 0);
	return test_result();
}
