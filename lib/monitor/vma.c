/* SPDX-License-Identifier: MIT */
/* vma.c - see vma.h. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/types.h>
#include "monitor/vma.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_MASK
#define MAP_HUGE_MASK 0x3f
#endif
#define HUGETLBFS_MAGIC_ 0x958458f6

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
	int has_file;		/* a path that is not [heap], [stack]... */
};

static int maps_line(const char *line, void *arg)
{
	struct maps_find *f = arg;
	unsigned long lo, hi;
	int name = 0;

	if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &name) < 2)
		return 0;
	/* [vsyscall], in the kernel's half, is no VMA (PROCMAP_QUERY agrees). */
	if ((long)lo < 0)
		return -ENOENT;
	if (hi <= f->addr || (lo > f->addr && !(f->flags & MRC_VMA_OR_NEXT)))
		return lo > f->addr ? -ENOENT : 0;
	f->out->start = lo;
	f->out->end = hi;
	f->has_file = name > 0 && line[name] && line[name] != '[';
	return 1;
}

struct smaps_find {
	uintptr_t start;
	int in;			/* inside the block of that mapping */
	size_t page_size;
};

static int smaps_line(const char *line, void *arg)
{
	struct smaps_find *f = arg;
	unsigned long lo, hi, kb;

	if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
		if (f->in)
			return -ENOENT;
		f->in = lo == f->start;
		return 0;
	}
	if (f->in && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
		f->page_size = kb << 10;
		return 1;
	}
	return 0;
}

/* Only mappings with a file behind them can be hugetlb (MAP_HUGETLB's
 * show as /anon_hugepage): smaps, slow, for those alone. */
static size_t smaps_page_size(uintptr_t start)
{
	struct smaps_find f = { .start = start };
	int fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	each_line(fd, smaps_line, &f);
	close(fd);
	return f.page_size;
}

static int query_by_reading(int fd, uintptr_t addr, unsigned flags, struct mrc_vma *out)
{
	struct maps_find f = { .addr = addr, .flags = flags, .out = out };
	int rc = each_line(fd, maps_line, &f);

	if (rc != 1)
		return rc ? rc : -ENOENT;
	out->page_size = 0;
	if (flags & MRC_VMA_PAGE_SIZE)
		out->page_size = f.has_file ? smaps_page_size(out->start)
					    : (size_t)getpagesize();
	return 0;
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
			out->page_size = q.vma_page_size;
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

/* The process's own descriptor for mrc_vma_page_size(), opened once:
 * opening /proc/self/maps costs several times the query (16 us against
 * 2.5 here).  atomic; -1 until opened, and again in a forked child (the
 * parent's describes the parent). */
static int self_fd = -1;
static pthread_once_t self_once = PTHREAD_ONCE_INIT;

static void self_fd_forget(void)
{
	if (self_fd >= 0)
		close(self_fd);
	self_fd = -1;
}

static void self_fd_atfork(void)
{
	pthread_atfork(NULL, NULL, self_fd_forget);
}

static int self_maps_fd(void)
{
	int fd = __atomic_load_n(&self_fd, __ATOMIC_ACQUIRE), mine, none = -1;

	if (fd >= 0)
		return fd;
	pthread_once(&self_once, self_fd_atfork);
	mine = mrc_vma_open();
	if (mine < 0)
		return mine;
	if (__atomic_compare_exchange_n(&self_fd, &none, mine, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return mine;
	close(mine);	/* another thread's won */
	return none;
}

size_t mrc_vma_page_size(uintptr_t addr)
{
	struct mrc_vma v;
	int fd = self_maps_fd();

	if (fd < 0 || mrc_vma_query(fd, addr, MRC_VMA_PAGE_SIZE, &v))
		return 0;
	return v.page_size;
}

/* One line of /proc/self/maps with a file behind it: 1, else 0. */
static int file_line(const char *line, uintptr_t *lo, uintptr_t *hi, uint64_t *off,
		     struct mrc_file_id *id)
{
	unsigned long l, h;
	unsigned long long o, ino;

	if (sscanf(line, "%lx-%lx %*s %llx %x:%x %llu", &l, &h, &o, &id->dev_major,
		   &id->dev_minor, &ino) != 6 || !ino || h <= l)
		return 0;
	*lo = l;
	*hi = h;
	*off = o;
	id->ino = ino;
	return 1;
}

struct file_maps {
	const struct mrc_file_id *id;
	uint64_t off_lo, off_hi;
	void (*fn)(uintptr_t start, uintptr_t end, void *arg);
	void *arg;
};

static int file_maps_line(const char *line, void *arg)
{
	struct file_maps *f = arg;
	struct mrc_file_id id;
	uintptr_t lo, hi;
	uint64_t off, a, b;

	if (!file_line(line, &lo, &hi, &off, &id) || id.ino != f->id->ino ||
	    id.dev_major != f->id->dev_major || id.dev_minor != f->id->dev_minor)
		return 0;
	a = off > f->off_lo ? off : f->off_lo;
	b = off + (hi - lo) < f->off_hi ? off + (hi - lo) : f->off_hi;
	if (a < b)
		f->fn(lo + (uintptr_t)(a - off), lo + (uintptr_t)(b - off), f->arg);
	return 0;
}

int mrc_vma_file_maps(const struct mrc_file_id *id, uint64_t off_lo, uint64_t off_hi,
		      void (*fn)(uintptr_t start, uintptr_t end, void *arg), void *arg)
{
	struct file_maps f = { id, off_lo, off_hi, fn, arg };
	int fd = self_maps_fd();

	return fd < 0 ? fd : each_line(fd, file_maps_line, &f);
}

struct files_in {
	uintptr_t start, end;
	void (*fn)(const struct mrc_file_id *id, uint64_t off_lo, uint64_t off_hi,
		   void *arg);
	void *arg;
};

static int files_in_line(const char *line, void *arg)
{
	struct files_in *f = arg;
	struct mrc_file_id id;
	uintptr_t lo, hi;
	uint64_t off;

	if (!file_line(line, &lo, &hi, &off, &id) || hi <= f->start || lo >= f->end)
		return 0;
	if (lo < f->start) {
		off += f->start - lo;
		lo = f->start;
	}
	if (hi > f->end)
		hi = f->end;
	f->fn(&id, off, off + (hi - lo), f->arg);
	return 0;
}

int mrc_vma_files_in(uintptr_t start, uintptr_t end,
		     void (*fn)(const struct mrc_file_id *id, uint64_t off_lo,
				uint64_t off_hi, void *arg), void *arg)
{
	struct files_in f = { start, end, fn, arg };
	int fd = self_maps_fd();

	return fd < 0 ? fd : each_line(fd, files_in_line, &f);
}

static int meminfo_line(const char *line, void *arg)
{
	unsigned long kb;

	if (sscanf(line, "Hugepagesize: %lu kB", &kb) != 1)
		return 0;
	*(size_t *)arg = kb << 10;
	return 1;
}

size_t mrc_huge_page_default(void)
{
	/* atomic: (size_t)-1 until read */
	static size_t cached = (size_t)-1;
	size_t size = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	int fd;

	if (size != (size_t)-1)
		return size;
	size = 0;
	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		each_line(fd, meminfo_line, &size);
		close(fd);
	}
	__atomic_store_n(&cached, size, __ATOMIC_RELAXED);
	return size;
}

size_t mrc_mmap_page_size(int flags, int fd)
{
	struct statfs st;
	unsigned log;

	/* The kernel takes a file's page size from the file, MAP_HUGETLB's
	 * from the flags (0: the default size). */
	if (!(flags & MAP_ANONYMOUS))
		return fd >= 0 && fstatfs(fd, &st) == 0 && st.f_type == HUGETLBFS_MAGIC_ ?
		       (size_t)st.f_bsize : (size_t)getpagesize();
	if (!(flags & MAP_HUGETLB))
		return (size_t)getpagesize();
	log = ((unsigned)flags >> MAP_HUGE_SHIFT) & MAP_HUGE_MASK;
	if (log)
		return (size_t)1 << log;
	return mrc_huge_page_default() ? mrc_huge_page_default() : (size_t)getpagesize();
}
