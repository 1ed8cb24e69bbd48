/* SPDX-License-Identifier: MIT */
/*
 * hooks/file.c - the calls that take pages from every mapping of a file,
 * not only from a range the call names: ftruncate/truncate shrinking a
 * file, fallocate punching a hole (or zeroing, collapsing, inserting), and
 * madvise(MADV_REMOVE), which punches a hole in the file behind the range
 * it is given (intercept.c hands it here).  A memfd or shm file mapped
 * twice loses the pages of both mappings; a registration made through the
 * other one still pins the old pages.  So these report every mapping of
 * the file range, found in /proc/self/maps (lib/monitor/vma.c), after the
 * real call: only that report is needed for correctness (hooks.h), and
 * these calls are too rare for a second read of that file to pay.
 *
 * Also remap_file_pages(), which the kernel turns into an internal
 * mmap(MAP_FIXED) over [start, start + size) (no userfaultfd event either).
 *
 * Truncation or a hole punch by another process, by io_uring
 * (IORING_OP_FALLOCATE, IORING_OP_FTRUNCATE) or by a raw syscall is not
 * seen here: docs/limitations.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/falloc.h>
#include "monitor/hooks.h"
#include "monitor/vma.h"

#define TO_END UINT64_MAX

static void report_map(uintptr_t start, uintptr_t end, void *arg)
{
	hooks_report(start, end, MRCACHE_CAUSE_DISCARD);
}

/* Without /proc/self/maps (no /proc in a container or chroot, out of
 * descriptors) the mappings of the file are unknown: any registration
 * may pin its dropped pages. */
static void report_unknown(int rc)
{
	if (rc < 0)
		hooks_report(0, UINTPTR_MAX, MRCACHE_CAUSE_DISCARD);
}

static void report_file(const struct mrc_file_id *id, uint64_t off_lo, uint64_t off_hi,
			void *arg)
{
	report_unknown(mrc_vma_file_maps(id, off_lo, off_hi, report_map, NULL));
}

static void report_stat(const struct stat *st, uint64_t off_lo, uint64_t off_hi)
{
	struct mrc_file_id id = {
		.ino = st->st_ino,
		.dev_major = major(st->st_dev),
		.dev_minor = minor(st->st_dev),
	};

	report_file(&id, off_lo, off_hi, NULL);
}

void hooks_file_removed(uintptr_t start, uintptr_t end)
{
	report_unknown(mrc_vma_files_in(start, end, report_file, NULL));
}

/* A shrink takes the file from len on (the report widens that to the page
 * len lies in, whose tail is zeroed in place).  Nothing to report when the
 * file does not shrink: the usual ftruncate of a new memfd to its size. */
static int shrinks(const struct stat *st, off_t len)
{
	return len >= 0 && len < st->st_size;
}

static int ftruncate_hooked(void **next, const char *name, int fd, off_t len)
{
	int (*real)(int, off_t) = (int (*)(int, off_t))hooks_next(next, name);
	struct stat st;
	int watching = hooks_wanted() && fstat(fd, &st) == 0 && shrinks(&st, len);
	int rc;

	hooks_probe_note();
	rc = real ? real(fd, len) : (int)syscall(SYS_ftruncate, fd, len);
	if (watching && rc == 0)
		report_stat(&st, (uint64_t)len, TO_END);
	return rc;
}

int ftruncate(int fd, off_t len)
{
	static void *next;

	return ftruncate_hooked(&next, "ftruncate", fd, len);
}

int ftruncate64(int fd, off_t len)
{
	static void *next;

	return ftruncate_hooked(&next, "ftruncate64", fd, len);
}

static int truncate_hooked(void **next, const char *name, const char *path, off_t len)
{
	int (*real)(const char *, off_t) = (int (*)(const char *, off_t))hooks_next(next, name);
	struct stat st;
	int watching = hooks_wanted() && stat(path, &st) == 0 && shrinks(&st, len);
	int rc;

	hooks_probe_note();
	rc = real ? real(path, len) : (int)syscall(SYS_truncate, path, len);
	if (watching && rc == 0)
		report_stat(&st, (uint64_t)len, TO_END);
	return rc;
}

int truncate(const char *path, off_t len)
{
	static void *next;

	return truncate_hooked(&next, "truncate", path, len);
}

int truncate64(const char *path, off_t len)
{
	static void *next;

	return truncate_hooked(&next, "truncate64", path, len);
}

/* The file offsets whose pages a fallocate() mode drops or moves:
 * 0 when it drops none (plain allocation, unsharing). */
static int fallocate_range(int mode, off_t off, off_t len, uint64_t *lo, uint64_t *hi)
{
	if (off < 0 || len <= 0)
		return 0;
	*lo = (uint64_t)off;
	if (mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE)) {
		*hi = TO_END;	/* everything after off moves */
		return 1;
	}
	if (!(mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)))
		return 0;
	*hi = (uint64_t)off + (uint64_t)len;
	return 1;
}

static int fallocate_hooked(void **next, const char *name, int fd, int mode, off_t off,
			    off_t len)
{
	int (*real)(int, int, off_t, off_t) =
		(int (*)(int, int, off_t, off_t))hooks_next(next, name);
	uint64_t lo, hi;
	struct stat st;
	int watching = hooks_wanted() && fallocate_range(mode, off, len, &lo, &hi) &&
		       fstat(fd, &st) == 0;
	int rc;

	hooks_probe_note();
	rc = real ? real(fd, mode, off, len) : (int)syscall(SYS_fallocate, fd, mode, off, len);
	/* A failed punch may have dropped part of the range. */
	if (watching)
		report_stat(&st, lo, hi);
	return rc;
}

int fallocate(int fd, int mode, off_t off, off_t len)
{
	static void *next;

	return fallocate_hooked(&next, "fallocate", fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len)
{
	static void *next;

	return fallocate_hooked(&next, "fallocate64", fd, mode, off, len);
}

int remap_file_pages(void *start, size_t size, int prot, size_t pgoff, int flags)
{
	static void *next;
	int (*real)(void *, size_t, int, size_t, int) =
		(int (*)(void *, size_t, int, size_t, int))hooks_next(&next, "remap_file_pages");
	uintptr_t s = (uintptr_t)start, e = s + size;
	int watching = hooks_wanted() && size && e > s;
	int rc;

	hooks_probe_note();
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_UNMAP);
	rc = real ? real(start, size, prot, pgoff, flags)
		  : (int)syscall(SYS_remap_file_pages, start, size, prot, pgoff, flags);
	/* Like a MAP_FIXED that fails, a failure may come after the unmap. */
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_UNMAP);
	return rc;
}
