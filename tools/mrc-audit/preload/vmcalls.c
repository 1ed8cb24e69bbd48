/* SPDX-License-Identifier: MIT */
/*
 * vmcalls.c - the unmapping call's stack, where the program made it
 * through libc: munmap, mremap, madvise (the discarding advice) and mmap
 * with MAP_FIXED are interposed, and each call that can
 * invalidate a registration is written, with its stack, into a ring
 * *before* the real call (the module's event comes during it).  When an
 * event invalidates a registration, regs.c asks here for the newest call
 * of this process that covered the invalidated part since the
 * registration began (mra_vmcall_find).
 *
 * What it cannot see, and the report then says so: a raw syscall(),
 * libc's own calls (free() unmaps large blocks through libc's internal
 * munmap, which no preload can interpose), shmdt (the segment's extent
 * is the kernel's), io_uring, another process, and the kernel's own
 * changes (reclaim, a split).
 *
 * The ring has its own lock, taken with trylock by the wrappers (a
 * wrapper interrupted by a signal whose handler unmaps must not wait on
 * itself: that call goes unrecorded), and under mra.lock by the finder.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "audit.h"

#define MRA_VMCALLS	1024u		/* calls kept, newest first found */

static struct mra_vmcall mra_vmring[MRA_VMCALLS];
static uint64_t mra_vmnext;		/* calls recorded so far */
static pthread_mutex_t mra_vmlock = PTHREAD_MUTEX_INITIALIZER;
static __thread int mra_vmdepth;	/* >0: inside a wrapper (dlsym, backtrace) */

/* The next definition of `name`: libc's. */
static void *mra_vmreal(const char *name)
{
	void *fn;

	mra_vmdepth++;
	fn = dlsym(RTLD_NEXT, name);
	mra_vmdepth--;
	return fn;
}

/* Whether to record: the audit runs, in the process that started it, and
 * this is not a call made by the recording itself. */
static bool mra_vmwanted(void)
{
	return mra.ready && !mra.child && !mra_vmdepth;
}

static void mra_vmrecord(const char *name, uintptr_t start, size_t len)
{
	struct mra_vmcall c = { .name = name, .start = start, .end = start + len,
				.tid = (int)syscall(SYS_gettid) };
	uint64_t i;

	mra_vmdepth++;
	c.depth = backtrace(c.stack, MRA_STACK);
	c.ns = mra_now();
	if (!pthread_mutex_trylock(&mra_vmlock)) {
		i = mra_vmnext++;
		mra_vmring[i % MRA_VMCALLS] = c;
		pthread_mutex_unlock(&mra_vmlock);
	}
	mra_vmdepth--;
}

/*
 * The newest recorded call that overlaps [start, end) and began at or
 * after `since` (the registration's start), copied to *out.  Under
 * mra.lock (the reporter thread or a post's slow path).
 */
bool mra_vmcall_find(uintptr_t start, uintptr_t end, uint64_t since, struct mra_vmcall *out)
{
	bool found = false;
	uint64_t n;

	pthread_mutex_lock(&mra_vmlock);
	n = mra_vmnext < MRA_VMCALLS ? mra_vmnext : MRA_VMCALLS;
	for (uint64_t k = 1; k <= n; k++) {
		const struct mra_vmcall *c = &mra_vmring[(mra_vmnext - k) % MRA_VMCALLS];

		if (c->ns >= since && c->start < end && c->end > start) {
			*out = *c;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&mra_vmlock);
	return found;
}

MRA_EXPORT int munmap(void *addr, size_t len)
{
	static int (*real)(void *, size_t);

	if (!real)
		real = mra_vmreal("munmap");
	if (mra_vmwanted())
		mra_vmrecord("munmap", (uintptr_t)addr, len);
	return real ? real(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

MRA_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	static void *(*real)(void *, size_t, size_t, int, ...);
	void *new_addr = NULL;
	va_list ap;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!real)
		real = mra_vmreal("mremap");
	if (mra_vmwanted()) {
		/* the old range moves or shrinks; MREMAP_FIXED also replaces the new one */
		mra_vmrecord("mremap", (uintptr_t)old, old_len);
		if (flags & MREMAP_FIXED)
			mra_vmrecord("mremap (MREMAP_FIXED target)", (uintptr_t)new_addr, new_len);
	}
	if (!real)
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	return real(old, old_len, new_len, flags, new_addr);
}

/* The advice that takes pages away from a mapping. */
static const char *mra_advice_name(int advice)
{
	switch (advice) {
	case MADV_DONTNEED:	return "madvise MADV_DONTNEED";
	case MADV_FREE:		return "madvise MADV_FREE";
	case MADV_REMOVE:	return "madvise MADV_REMOVE";
	default:		return NULL;
	}
}

MRA_EXPORT int madvise(void *addr, size_t len, int advice)
{
	static int (*real)(void *, size_t, int);
	const char *name = mra_advice_name(advice);

	if (!real)
		real = mra_vmreal("madvise");
	if (name && mra_vmwanted())
		mra_vmrecord(name, (uintptr_t)addr, len);
	return real ? real(addr, len, advice) : (int)syscall(SYS_madvise, addr, len, advice);
}

static void *(*mra_real_mmap)(void *, size_t, int, int, int, off_t);

MRA_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!mra_real_mmap)
		mra_real_mmap = mra_vmreal("mmap");
	/* MAP_FIXED replaces what was there; MAP_FIXED_NOREPLACE never does */
	if ((flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) == MAP_FIXED && mra_vmwanted())
		mra_vmrecord("mmap MAP_FIXED", (uintptr_t)addr, len);
	if (!mra_real_mmap)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	return mra_real_mmap(addr, len, prot, flags, fd, off);
}

/* The same call on a 64-bit off_t ABI (glibc makes it an alias). */
MRA_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
