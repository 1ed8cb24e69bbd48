/* SPDX-License-Identifier: MIT */
/*
 * guarantee.h - the monitor guarantee, checked with the io_uring oracle.
 *
 * For every monitor and every case: map a range, get it through a
 * uring-backed cache (must miss, and the oracle must see its bytes), get it
 * again (must hit: it is cached), run the case's operation (which leaves
 * fresh memory at the same addresses), then get it once more:
 *  - a real monitor must make that get miss, and the oracle must see the
 *    bytes in the current mapping;
 *  - monitor `none` is the negative control: the get must hit and the
 *    oracle must report stale data, or the check proves nothing.
 * Cases whose operation cannot change pinned pages (same_pages: MADV_FREE)
 * accept a hit with fresh data from a real monitor as well.  Memory the
 * kernel's io_uring refuses to pin (SysV shm before Linux 6.x) skips.
 *
 * Monitors: MRCACHE_MONITOR when set (the guest runs the suite with
 * MRCACHE_MONITOR=kernel), else every real monitor; `none` always runs.
 * A monitor that cannot start here skips its cases with the reason.
 */
#ifndef MRC_TEST_GUARANTEE_H
#define MRC_TEST_GUARANTEE_H

#include <stddef.h>

#define GUARANTEE_SKIP 77	/* from prepare/apply: set ctx->why */
#define GUARANTEE_MAX_LEN (4ul << 20)

struct guarantee_ctx {
	void *addr;		/* set by prepare: the range under test */
	size_t len;
	void *aux;		/* the case's own state */
	size_t aux_len;
	char why[160];		/* reason for GUARANTEE_SKIP */
};

struct guarantee_case {
	const char *name;
	/* Map [addr, addr+len) (<= GUARANTEE_MAX_LEN).  0, -errno or SKIP. */
	int (*prepare)(struct guarantee_ctx *c);
	/* The operation; afterwards fresh memory maps the same range. */
	int (*apply)(struct guarantee_ctx *c);
	/* Unmap whatever prepare and apply left. */
	void (*release)(struct guarantee_ctx *c);
	/* Non-NULL when even a stale registration sees the same pages after
	 * the operation (so `none` can only be caught by its hit, and a real
	 * monitor may keep the registration): why. */
	const char *same_pages;
};

/* Runs every case under every monitor; returns the exit code (0/1/77). */
int guarantee_run(const struct guarantee_case *cases, size_t ncases);

/* mmap anonymous memory, at exactly `at` if not NULL (never replacing a
 * mapping).  NULL on failure. */
void *guarantee_map(void *at, size_t len, int shared);

/* The usual prepare and release: GUARANTEE_LEN bytes of fresh private or
 * shared anonymous memory; release unmaps addr and aux (if set). */
#define GUARANTEE_LEN (64 * 1024)
int guarantee_prepare_private(struct guarantee_ctx *c);
int guarantee_prepare_shared(struct guarantee_ctx *c);
void guarantee_release_maps(struct guarantee_ctx *c);

#endif
