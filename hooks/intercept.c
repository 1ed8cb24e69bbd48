/* SPDX-License-Identifier: MIT */
/*
 * hooks/intercept.c - libmrcache's own munmap, mremap, madvise, mmap, brk,
 * sbrk, shmat and shmdt (see hooks.h and docs/monitors.md); the calls that
 * act on a file's every mapping are in hooks/file.c.
 *
 * Symbol interposition, not code patching: these definitions are in place
 * from the moment the library is loaded, so "installing" the hooks monitor
 * while other threads run is one atomic store (a cache joining
 * hooks_caches).  Each call reports after the real call returns; it also
 * reports before, which only narrows the window in which a concurrent get
 * may still hit the registration being unmapped.  Raw syscall(2) and
 * glibc-internal calls do not come through here (hooks/malloc.c covers
 * what glibc's allocator unmaps).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "monitor/hooks.h"
#include "monitor/vma.h"

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

void *hooks_next(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	return fn;
}

/* A forked child's copies of the parent's caches refuse every call, and
 * mrcache_destroy() frees them without stopping their monitor: drop them
 * from the tables before any hook in the child can reach them. */
static void forget_caches_in_child(void)
{
	memset(&hooks_caches, 0, sizeof(hooks_caches));
	memset(&hooks_uffd_caches, 0, sizeof(hooks_uffd_caches));
}

__attribute__((constructor)) static void hooks_init(void)
{
	__atomic_store_n(&hooks_loaded, 1, __ATOMIC_RELEASE);
	pthread_atfork(NULL, NULL, forget_caches_in_child);
}

static int range_of(const void *addr, size_t len, uintptr_t *start, uintptr_t *end)
{
	*start = (uintptr_t)addr;
	*end = *start;
	if (!len || __builtin_add_overflow(*start, len, end))
		return 0;
	return 1;
}

/* The same for a length the kernel rounds up to the mapping's page size
 * (mmap and mremap of hugetlb memory: 4 KiB there can replace 1 GiB). */
static int range_of_pages(const void *addr, size_t len, size_t page,
			  uintptr_t *start, uintptr_t *end)
{
	/* A length the rounding overflows fails in the kernel. */
	if (page > 1)
		len = len > SIZE_MAX - page ? 0 : mrc_round_up(len, page);
	return range_of(addr, len, start, end);
}

/* The "after" half, shared by every syscall hook. */
static void after(int ok, uintptr_t start, uintptr_t end, enum mrcache_cause cause)
{
	if (ok)
		hooks_report(start, end, cause);
}

int munmap(void *addr, size_t len)
{
	static void *next;
	int (*real)(void *, size_t) = (int (*)(void *, size_t))hooks_next(&next, "munmap");
	int watching = hooks_wanted();
	uintptr_t s, e;
	int rc;

	hooks_probe_note();
	if (!range_of(addr, len, &s, &e))
		watching = 0;
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_UNMAP);
	rc = real ? real(addr, len) : (int)syscall(SYS_munmap, addr, len);
	/* Even a failed munmap may have unmapped part of the range. */
	after(watching, s, e, MRCACHE_CAUSE_UNMAP);
	return rc;
}

static int discards(int advice)
{
	switch (advice) {
	case MADV_DONTNEED:
	case MADV_FREE:
	case MADV_REMOVE:
	case MADV_DONTNEED_LOCKED:
	case MADV_GUARD_INSTALL:
		return 1;
	default:
		return 0;
	}
}

int madvise(void *addr, size_t len, int advice)
{
	static void *next;
	int (*real)(void *, size_t, int) =
		(int (*)(void *, size_t, int))hooks_next(&next, "madvise");
	int watching = discards(advice) && hooks_wanted();
	uintptr_t s, e;
	int rc;

	hooks_probe_note();
	if (!range_of(addr, len, &s, &e))
		watching = 0;
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_DISCARD);
	rc = real ? real(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice);
	/* ENOMEM for a hole in the range still discards the rest. */
	after(watching, s, e, MRCACHE_CAUSE_DISCARD);
	/* A hole punched in the file: every other mapping of it lost the
	 * pages too (file.c). */
	if (watching && advice == MADV_REMOVE)
		hooks_file_removed(s, e);
	return rc;
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	static void *next;
	void *(*real)(void *, size_t, size_t, int, ...) =
		(void *(*)(void *, size_t, size_t, int, ...))hooks_next(&next, "mremap");
	int watching = hooks_wanted();
	/* Growing in place keeps the pages: only a move or a shrink changes
	 * what the old range maps. */
	int may_change = (flags & MREMAP_MAYMOVE) || new_len < old_len;
	void *new_addr = NULL, *rc;
	uintptr_t os = 0, oe = 0, ns = 0, ne = 0;
	size_t page = 0;
	va_list ap;

	hooks_probe_note();
	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	/* On hugetlb the kernel rounds both lengths up to the huge page. */
	if (watching)
		page = mrc_vma_page_size((uintptr_t)old);
	if (!range_of_pages(old, old_len, page, &os, &oe))
		os = oe = 0;
	if (!(flags & MREMAP_FIXED) || !range_of_pages(new_addr, new_len, page, &ns, &ne))
		ns = ne = 0;
	if (watching) {
		if (may_change)
			hooks_report(os, oe, MRCACHE_CAUSE_REMAP);
		hooks_report(ns, ne, MRCACHE_CAUSE_UNMAP);
	}
	if (real)
		rc = real(old, old_len, new_len, flags, new_addr);
	else
		rc = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	if (watching && rc != MAP_FAILED) {
		if (rc != old || new_len < old_len || (flags & MREMAP_DONTUNMAP))
			hooks_report(os, oe, MRCACHE_CAUSE_REMAP);
		hooks_report(ns, ne, MRCACHE_CAUSE_UNMAP);
	}
	return rc;
}

static void *mmap_hooked(void **next, const char *name, void *addr, size_t len,
			 int prot, int flags, int fd, off_t off)
{
	void *(*real)(void *, size_t, int, int, int, off_t) =
		(void *(*)(void *, size_t, int, int, int, off_t))hooks_next(next, name);
	/* MAP_FIXED_NOREPLACE fails rather than replace anything. */
	int watching = (flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE) &&
		       hooks_wanted();
	uintptr_t s = 0, e = 0;
	void *rc;

	hooks_probe_note();
	/* MAP_HUGETLB or a hugetlbfs file: the length is rounded up to the
	 * huge page, and so is what the mapping replaces. */
	if (watching && !range_of_pages(addr, len, mrc_mmap_page_size(flags, fd), &s, &e))
		watching = 0;
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_UNMAP);
	if (real)
		rc = real(addr, len, prot, flags, fd, off);
	else
		rc = (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	/* A MAP_FIXED that fails may have unmapped the old range already. */
	after(watching, s, e, MRCACHE_CAUSE_UNMAP);
	return rc;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *next;

	return mmap_hooked(&next, "mmap", addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *next;

	return mmap_hooked(&next, "mmap64", addr, len, prot, flags, fd, off);
}

/* brk and sbrk go through glibc's __sbrk so that glibc's cached break,
 * which malloc uses, stays right. */
extern void *__sbrk(intptr_t increment);

static void *sbrk_hooked(intptr_t incr)
{
	int watching = incr < 0 && hooks_wanted();
	uintptr_t cur = 0;
	void *rc;

	hooks_probe_note();
	if (watching) {
		cur = (uintptr_t)__sbrk(0);
		hooks_report(cur + (uintptr_t)incr, cur, MRCACHE_CAUSE_UNMAP);
	}
	rc = __sbrk(incr);
	if (watching)
		after(rc != (void *)-1, cur + (uintptr_t)incr, cur, MRCACHE_CAUSE_UNMAP);
	return rc;
}

void *sbrk(intptr_t incr)
{
	return sbrk_hooked(incr);
}

int brk(void *addr)
{
	uintptr_t cur = (uintptr_t)__sbrk(0);

	return sbrk_hooked((intptr_t)((uintptr_t)addr - cur)) == (void *)-1 ? -1 : 0;
}

void *shmat(int shmid, const void *addr, int flags)
{
	static void *next;
	void *(*real)(int, const void *, int) =
		(void *(*)(int, const void *, int))hooks_next(&next, "shmat");
	struct shmid_ds ds;
	int watching = (flags & SHM_REMAP) && addr && hooks_wanted() &&
		       shmctl(shmid, IPC_STAT, &ds) == 0;
	uintptr_t s = (uintptr_t)addr, e = watching ? s + ds.shm_segsz : s;
	void *rc;

	hooks_probe_note();
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_UNMAP);
	rc = real ? real(shmid, addr, flags) : (void *)syscall(SYS_shmat, shmid, addr, flags);
	/* A SHM_HUGETLB segment maps its size rounded up to the huge page
	 * (shm_segsz is the size asked for); only the mapping tells. */
	if (watching && rc != (void *)-1)
		range_of_pages(rc, ds.shm_segsz, mrc_vma_page_size((uintptr_t)rc), &s, &e);
	if (watching)
		after(rc != (void *)-1, s, e, MRCACHE_CAUSE_UNMAP);
	return rc;
}

/* The end of the System V segment attached at addr: shmdt() detaches every
 * mapping of that segment from addr on, and only /proc/self/maps knows how
 * far that is.  Read with a stack buffer: no allocation inside a hook. */
static uintptr_t shm_end(uintptr_t addr)
{
	char buf[4096], line[512];
	unsigned long lo, hi, inode = 0, want = 0;
	uintptr_t end = addr;
	size_t ll = 0;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return addr;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &inode) != 3)
				continue;
			if (lo == addr && !want && strstr(line, "SYSV")) {
				want = inode;
				end = hi;
			} else if (want && lo == end && inode == want) {
				end = hi;
			} else if (want && lo >= end) {
				close(fd);
				return end;
			}
		}
	}
	close(fd);
	return end;
}

int shmdt(const void *addr)
{
	static void *next;
	int (*real)(const void *) = (int (*)(const void *))hooks_next(&next, "shmdt");
	int watching = hooks_wanted();
	uintptr_t s = (uintptr_t)addr, e = watching ? shm_end(s) : s;
	int rc;

	hooks_probe_note();
	if (watching && e == s)
		e = s + (uintptr_t)getpagesize();	/* unknown size: at least addr */
	if (watching)
		hooks_report(s, e, MRCACHE_CAUSE_UNMAP);
	rc = real ? real(addr) : (int)syscall(SYS_shmdt, addr);
	after(watching && rc == 0, s, e, MRCACHE_CAUSE_UNMAP);
	return rc;
}
