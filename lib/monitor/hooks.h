/* SPDX-License-Identifier: MIT */
/*
 * hooks.h - what the interposed unmapping calls (hooks/intercept.c,
 * hooks/malloc.c) share with the monitors that use them.
 *
 * libmrcache defines munmap, mremap, madvise, mmap, brk, sbrk, shmat,
 * shmdt, free, realloc, reallocarray and malloc_trim, and (for what they
 * take from every mapping of a file) ftruncate, truncate, fallocate and
 * remap_file_pages.  Each forwards to the
 * next definition (libc, or a sanitizer's interceptor) found with
 * dlsym(RTLD_NEXT) and, while a cache uses the hooks monitor, reports the
 * range it unmapped to every such cache: before the call (so no get hits
 * the old registration while the call runs) and after it returns (so a
 * registration made during the call, which may have pinned the old pages,
 * is dropped too).  Only the "after" report is required for correctness.
 */
#ifndef MRC_HOOKS_H
#define MRC_HOOKS_H

#include <stdint.h>
#include "monitor/hooks_fanout.h"

/* The caches that use the hooks monitor, and those that use the uffd
 * monitor: the interposed calls report to both.  For uffd caches this
 * closes, for every call that comes through libmrcache, the two windows
 * userfaultfd leaves open (the event is read, and the unmapping thread
 * released, before the handler reports it; MADV_DONTNEED is reported before
 * its pages are dropped); userfaultfd covers what interposition misses. */
extern struct hooks_fanout hooks_caches;
extern struct hooks_fanout hooks_uffd_caches;

/* While monitor/hooks.c checks that the application's calls really reach
 * libmrcache's definitions, every interposer counts itself.  Otherwise it
 * costs one load of a word nobody writes (no TLS: a dlopen()ed libmrcache
 * must not need static TLS, and dynamic TLS may allocate inside free()). */
extern int hooks_probing;
extern unsigned hooks_probe_hits;

static inline void hooks_probe_note(void)
{
	if (__builtin_expect(__atomic_load_n(&hooks_probing, __ATOMIC_RELAXED), 0))
		__atomic_fetch_add(&hooks_probe_hits, 1, __ATOMIC_RELAXED);
}

/* Set by libmrcache-hooks' constructor: the library is in the process.
 * A linker with --as-needed drops it from a program that calls none of
 * its functions itself, and the monitor's message must say so. */
extern int hooks_loaded;

/* The next definition of `name` after libmrcache's, cached in *slot;
 * NULL when there is none (a fully static program). */
void *hooks_next(void **slot, const char *name);

static inline int hooks_wanted(void)
{
	return hooks_fanout_active(&hooks_caches) || hooks_fanout_active(&hooks_uffd_caches);
}

static inline void hooks_report(uintptr_t start, uintptr_t end,
				enum mrcache_cause cause)
{
	hooks_fanout_unmapped(&hooks_caches, start, end, cause);
	hooks_fanout_unmapped(&hooks_uffd_caches, start, end, cause);
}

/* 0 when the application's munmap() reaches libmrcache's definition, else
 * -ENOTSUP (checked once, monitor/hooks.c). */
int hooks_interposed(void);

/* MADV_REMOVE of [start, end) punched a hole in the files behind it:
 * report every mapping of those file ranges (hooks/file.c). */
void hooks_file_removed(uintptr_t start, uintptr_t end);

/* The free() side: decode glibc's chunk header (hooks/malloc.c). */
int hooks_malloc_is_glibc(void);
/* Record the main heap's extent: its start (0 if unknown) and the current
 * break.  Called at start; hooks_malloc_note_watch() notes the break at
 * every watch, so that every registration in the brk heap lies below the
 * highest break a trim is compared with. */
void hooks_malloc_note_heap(uintptr_t heap_lo);
/* The same at every watch, plus the thread heap [start, end) lies in, if
 * any, for malloc_trim(). */
void hooks_malloc_note_watch(uintptr_t start, uintptr_t end);

#endif
