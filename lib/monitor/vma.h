/* SPDX-License-Identifier: MIT */
/*
 * vma.h - what the kernel says about this process's mappings (VMAs): their
 * extent, for the uffd monitor (registering a sub-range of a VMA splits it,
 * and a split VMA breaks the application's mremap), and their page size,
 * for the lengths the kernel rounds up to the huge page on hugetlb mappings
 * (the hooks' mmap, mremap and shmat).
 *
 * PROCMAP_QUERY on /proc/self/maps (Linux 6.11+), else a read of that file
 * and, for the page size of a mapping with a file behind it, of
 * /proc/self/smaps.  Stack buffers only, no allocation and no lock: callable
 * from the hooks (inside free(), munmap(), any thread).
 */
#ifndef MRC_VMA_H
#define MRC_VMA_H

#include <stddef.h>
#include <stdint.h>

struct mrc_vma {
	uintptr_t start, end;
	size_t page_size;	/* the huge page size on hugetlb; 0: not asked */
};

#define MRC_VMA_OR_NEXT		1u	/* none at addr: the first one above */
#define MRC_VMA_PAGE_SIZE	2u	/* fill page_size (may read smaps) */

/* A descriptor of /proc/self/maps for mrc_vma_query(), or -errno.  It
 * describes the process that opened it: a forked child needs its own. */
int mrc_vma_open(void);

/* The mapping containing addr (or, with MRC_VMA_OR_NEXT, the first above
 * it): 0, -ENOENT (none), or -errno (no /proc). */
int mrc_vma_query(int maps_fd, uintptr_t addr, unsigned flags, struct mrc_vma *out);

/* The page size of the mapping containing addr; 0 when nothing is mapped
 * there or /proc cannot tell.  Keeps one descriptor of /proc/self/maps
 * open for the process (a forked child opens its own). */
size_t mrc_vma_page_size(uintptr_t addr);

/* The kernel's default huge page size (MAP_HUGETLB without a size), from
 * /proc/meminfo, read once; 0 if it has none. */
size_t mrc_huge_page_default(void);

/* The page size the kernel rounds an mmap(len, flags, fd) to: the huge
 * page size for MAP_HUGETLB or a hugetlbfs file, else the base page. */
size_t mrc_mmap_page_size(int flags, int fd);

/* A file, as /proc/self/maps names it (0 for anonymous memory). */
struct mrc_file_id {
	uint64_t ino;
	unsigned dev_major, dev_minor;
};

/* For truncation and hole punching, which take pages from every mapping
 * of a file, not only from the one the call named.  Both read
 * /proc/self/maps (stack buffers, like the rest), so they cost a read of
 * that file: for the hooks of calls that are rare, not for a watch.
 *
 * fn(start, end, arg) for each mapping (shared or private) of the file
 * `id`, for the part of it that maps file offsets in [off_lo, off_hi)
 * (off_hi UINT64_MAX: to the end).  0, or -errno (no /proc). */
int mrc_vma_file_maps(const struct mrc_file_id *id, uint64_t off_lo, uint64_t off_hi,
		      void (*fn)(uintptr_t start, uintptr_t end, void *arg), void *arg);

/* fn(id, off_lo, off_hi, arg) for each file mapping in [start, end): the
 * file and the offsets that part of the range maps.  0, or -errno. */
int mrc_vma_files_in(uintptr_t start, uintptr_t end,
		     void (*fn)(const struct mrc_file_id *id, uint64_t off_lo,
				uint64_t off_hi, void *arg), void *arg);

/* x rounded up to a power of two. */
static inline uintptr_t mrc_round_up(uintptr_t x, size_t to)
{
	return (x + to - 1) & ~(uintptr_t)(to - 1);
}

#endif
