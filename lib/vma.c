/* SPDX-License-Identifier: MIT */
/* vma.c - see vma.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/types.h>
#include "vma.h"

/* include/uapi/linux/fs.h of Linux 6.11; the C library's headers may be
 * older.  The kernel takes any size up to its own and zero-fills the rest. */
struct procmap_query_ {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#define PROCMAP_QUERY_ _IOWR('f', 17, struct procmap_query_)
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA_ 0x10

/* atomic: 0 not tried yet, 1 PROCMAP_QUERY works, -1 it does not */
static int procmap_works;

int mrc_vma_open(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	return fd >= 0 ? fd : -errno;
}

/* fn(line, arg) for each line of the file until it returns nonzero: that
 * value, 0 at the end, or -errno.  Longer lines are cut (the fields read
 * here come first). */
static int each_line(int fd, int (*fn)(const char *line, void *arg), void *arg)
{
	char buf[4096], line[512];
	size_t ll = 0;
	off_t off = 0;
	ssize_t n;
	int rc;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		off += n;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			rc = fn(line, arg);
			if (rc)
				return rc;
		}
	}
	return n < 0 ? -errno : 0;
}

struct maps_find {
	uintptr_t addr;
	unsigned flags;
	struct mrc_vma *out;
};

static int maps_line(const char *line, void *arg)
{
	struct maps_find *f = arg;
	unsigned long lo, hi;

	if (sscanf(line, "%lx-%lx ", &lo, &hi) != 2)
		return 0;
	/* [vsyscall], in the kernel's half, is no VMA (PROCMAP_QUERY agrees). */
	if ((long)lo < 0)
		return -ENOENT;
	if (hi <= f->addr || (lo > f->addr && !(f->flags & MRC_VMA_OR_NEXT)))
		return lo > f->addr ? -ENOENT : 0;
	f->out->start = lo;
	f->out->end = hi;
	return 1;
}

static int query_by_reading(int fd, uintptr_t addr, unsigned flags, struct mrc_vma *out)
{
	struct maps_find f = { .addr = addr, .flags = flags, .out = out };
	int rc = each_line(fd, maps_line, &f);

	return rc == 1 ? 0 : rc ? rc : -ENOENT;
}

int mrc_vma_query(int maps_fd, uintptr_t addr, unsigned flags, struct mrc_vma *out)
{
	struct procmap_query_ q;

	if (__atomic_load_n(&procmap_works, __ATOMIC_RELAXED) >= 0) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_addr = addr;
		q.query_flags = flags & MRC_VMA_OR_NEXT ? PROCMAP_QUERY_COVERING_OR_NEXT_VMA_ : 0;
		if (ioctl(maps_fd, PROCMAP_QUERY_, &q) == 0) {
			__atomic_store_n(&procmap_works, 1, __ATOMIC_RELAXED);
			out->start = q.vma_start;
			out->end = q.vma_end;
			return 0;
		}
		if (errno == ENOENT)
			return -ENOENT;
		/* ENOTTY before 6.11: read the file from now on. */
		if (errno == ENOTTY)
			__atomic_store_n(&procmap_works, -1, __ATOMIC_RELAXED);
	}
	return query_by_reading(maps_fd, addr, flags, out);
}
