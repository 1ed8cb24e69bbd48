/* SPDX-License-Identifier: MIT */
/*
 * vma.h - what the kernel says about this process's mappings (VMAs): their
 * extent, for the uffd monitor (registering a sub-range of a VMA splits it,
 * and a split VMA breaks the application's mremap).
 *
 * PROCMAP_QUERY on /proc/self/maps (Linux 6.11+), else a read of that file.
 * Stack buffers only, no allocation and no lock.
 */
#ifndef MRC_VMA_H
#define MRC_VMA_H

#include <stdint.h>

struct mrc_vma {
	uintptr_t start, end;
};

#define MRC_VMA_OR_NEXT		1u	/* none at addr: the first one above */

/* A descriptor of /proc/self/maps for mrc_vma_query(), or -errno.  It
 * describes the process that opened it: a forked child needs its own. */
int mrc_vma_open(void);

/* The mapping containing addr (or, with MRC_VMA_OR_NEXT, the first above
 * it): 0, -ENOENT (none), or -errno (no /proc). */
int mrc_vma_query(int maps_fd, uintptr_t addr, unsigned flags, struct mrc_vma *out);

#endif
