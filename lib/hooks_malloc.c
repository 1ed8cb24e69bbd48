/* SPDX-License-Identifier: MIT */
/*
 * hooks_malloc.c - what glibc's allocator unmaps behind the application's
 * back: free() of an mmapped block, heap trimming by free(), realloc() and
 * malloc_trim().  glibc does it through internal aliases (__munmap,
 * __madvise, __sbrk) that no interposed munmap can see, so libmrcache
 * wraps the allocator's entry points instead and works out, from glibc's
 * chunk header and the program break, what the real call gave back:
 *
 *   mmapped chunk (IS_MMAPPED)  its whole mapping, exactly
 *   main arena (brk heap)       [break after, break before) when it shrank
 *   thread arena (mmapped heap) the heap's 64 MiB reservation, when the
 *                               freed block could reach the top (see
 *                               may_trim); glibc discards the heap's top
 *                               with MADV_DONTNEED or unmaps the heap
 *   malloc_trim()               the whole main heap and every thread heap
 *                               seen so far (it discards free pages anywhere)
 *
 * Chunks are decoded only when the next free() is glibc's own (not a
 * sanitizer's or another allocator's: those unmap through munmap, which
 * hooks_intercept.c sees when they call it through the PLT).  The
 * definitions are weak so a fully static link against glibc keeps glibc's
 * (and loses this part; docs/monitors.md).
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hooks.h"

extern void __libc_free(void *ptr);
extern void *__libc_realloc(void *ptr, size_t size);
extern void *__sbrk(intptr_t increment);

/* glibc malloc.c, stable since 2.3: the size word before the user
 * pointer, with these flag bits; a mmapped chunk's prev_size is its offset
 * from the start of its mapping; a thread heap is aligned to, and at most,
 * HEAP_MAX_SIZE (2 * DEFAULT_MMAP_THRESHOLD_MAX = 64 MiB on 64-bit). */
#define CHUNK_PREV_INUSE	0x1ul
#define CHUNK_IS_MMAPPED	0x2ul
#define CHUNK_NON_MAIN_ARENA	0x4ul
#define CHUNK_FLAGS		0x7ul
#define CHUNK_HDR		(2 * sizeof(size_t))
#define HEAP_MAX		(2ul * 4 * 1024 * 1024 * sizeof(long))
/* glibc trims only after freeing (with its free neighbours) this much. */
#define CONSOLIDATION_THRESHOLD	65536ul

#define SEEN_HEAPS 64
static uintptr_t seen_heaps[SEEN_HEAPS];	/* atomic: thread heaps met */
static uintptr_t brk_high;	/* atomic: highest break seen */
static uintptr_t main_heap_lo;	/* atomic: lowest break seen */

struct chunk_info {
	uintptr_t map_lo, map_hi;	/* IS_MMAPPED: the mapping */
	uintptr_t heap;			/* NON_MAIN_ARENA: its heap, if it may trim */
	int mmapped;
	int may_trim;			/* main arena: watch the break */
};

static void *next_free_fn, *next_realloc_fn, *next_trim_fn;
static __thread int resolving __attribute__((tls_model("initial-exec")));

static void leak(void *p)
{
}

/* The first free() looks the next one up with dlsym(), which may free in
 * turn (before a sanitizer's runtime is even initialised): those nested
 * frees leak, since whose memory it is is not known yet. */
static void (*next_free(void))(void *)
{
	void *fn = __atomic_load_n(&next_free_fn, __ATOMIC_ACQUIRE);

	if (fn)
		return (void (*)(void *))fn;
	if (resolving)
		return leak;
	resolving = 1;
	fn = hooks_next(&next_free_fn, "free");
	resolving = 0;
	return fn ? (void (*)(void *))fn : __libc_free;
}

static void *(*next_realloc(void))(void *, size_t)
{
	void *fn = __atomic_load_n(&next_realloc_fn, __ATOMIC_ACQUIRE);

	if (fn)
		return (void *(*)(void *, size_t))fn;
	if (resolving)
		return __libc_realloc;
	resolving = 1;
	fn = hooks_next(&next_realloc_fn, "realloc");
	resolving = 0;
	return fn ? (void *(*)(void *, size_t))fn : __libc_realloc;
}

int hooks_malloc_is_glibc(void)
{
	return next_free() == __libc_free;
}

static void note_break(uintptr_t brk)
{
	uintptr_t cur = __atomic_load_n(&brk_high, __ATOMIC_RELAXED);

	while (brk > cur && !__atomic_compare_exchange_n(&brk_high, &cur, brk, 1,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	cur = __atomic_load_n(&main_heap_lo, __ATOMIC_RELAXED);
	while ((!cur || brk < cur) &&
	       !__atomic_compare_exchange_n(&main_heap_lo, &cur, brk, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static void note_heap(uintptr_t heap)
{
	for (unsigned i = 0; i < SEEN_HEAPS; i++) {
		uintptr_t cur = __atomic_load_n(&seen_heaps[i], __ATOMIC_RELAXED);

		if (cur == heap)
			return;
		if (!cur && __atomic_compare_exchange_n(&seen_heaps[i], &cur, heap, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return;
		if (cur == heap)
			return;
	}
}

/* Could freeing this chunk make glibc trim?  Only if the chunk and its
 * free neighbours add up to CONSOLIDATION_THRESHOLD; the next chunk's size
 * counts in full (it may be the top chunk).  The next chunk's header is
 * always mapped: the top chunk follows every chunk of a heap. */
static int may_trim(uintptr_t chunk, size_t size_word)
{
	size_t size = size_word & ~CHUNK_FLAGS;
	size_t around = size + (((size_t *)(chunk + size))[1] & ~CHUNK_FLAGS);

	if (!(size_word & CHUNK_PREV_INUSE))
		around += ((size_t *)chunk)[0];
	return around >= CONSOLIDATION_THRESHOLD;
}

static void chunk_before(void *p, struct chunk_info *ci)
{
	uintptr_t chunk = (uintptr_t)p - CHUNK_HDR;
	size_t size_word = ((size_t *)p)[-1];

	memset(ci, 0, sizeof(*ci));
	if (size_word & CHUNK_IS_MMAPPED) {
		ci->mmapped = 1;
		ci->map_lo = chunk - ((size_t *)p)[-2];
		ci->map_hi = chunk + (size_word & ~CHUNK_FLAGS);
	} else if (may_trim(chunk, size_word)) {
		if (size_word & CHUNK_NON_MAIN_ARENA) {
			ci->heap = chunk & ~(HEAP_MAX - 1);
			note_heap(ci->heap);
		} else {
			ci->may_trim = 1;
			note_break((uintptr_t)__sbrk(0));
		}
	}
}

static void chunk_after(const struct chunk_info *ci, enum mrcache_cause cause)
{
	if (ci->mmapped) {
		hooks_report(ci->map_lo, ci->map_hi, cause);
	} else if (ci->heap) {
		hooks_report(ci->heap, ci->heap + HEAP_MAX, MRCACHE_CAUSE_DISCARD);
	} else if (ci->may_trim) {
		uintptr_t now = (uintptr_t)__sbrk(0);
		uintptr_t high = __atomic_exchange_n(&brk_high, now, __ATOMIC_RELAXED);

		/* brk_high, not the break read before: a trim racing with
		 * another thread's growth still shows up against the
		 * highest break any hook saw. */
		if (now < high)
			hooks_report(now, high, MRCACHE_CAUSE_UNMAP);
		note_break(now);
	}
}

/* Decode only glibc's own chunks, and only while some cache listens. */
static int decode(void *p)
{
	return p && hooks_wanted() && hooks_malloc_is_glibc();
}

__attribute__((weak)) void free(void *p)
{
	struct chunk_info ci;

	hooks_probe_hits++;
	if (!decode(p)) {
		next_free()(p);
		return;
	}
	chunk_before(p, &ci);
	next_free()(p);
	chunk_after(&ci, MRCACHE_CAUSE_UNMAP);
}

__attribute__((weak)) void *realloc(void *p, size_t size)
{
	struct chunk_info ci;
	void *q;

	hooks_probe_hits++;
	if (!decode(p))
		return next_realloc()(p, size);
	chunk_before(p, &ci);
	q = next_realloc()(p, size);
	if (!q && size)
		return NULL;	/* failed: the old block is intact */
	/* An mmapped block grown in place by mremap keeps its pages. */
	if (ci.mmapped && q == p && ci.map_hi - ci.map_lo <= size + CHUNK_HDR)
		ci.mmapped = 0;
	chunk_after(&ci, MRCACHE_CAUSE_REMAP);
	return q;
}

__attribute__((weak)) void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

__attribute__((weak)) int malloc_trim(size_t pad)
{
	int (*real)(size_t) = (int (*)(size_t))hooks_next(&next_trim_fn, "malloc_trim");
	int watching = hooks_wanted() && hooks_malloc_is_glibc();
	int rc;

	hooks_probe_hits++;
	if (watching)
		note_break((uintptr_t)__sbrk(0));
	rc = real ? real(pad) : 0;
	if (!watching)
		return rc;
	/* glibc discards free pages anywhere in every arena. */
	hooks_report(__atomic_load_n(&main_heap_lo, __ATOMIC_RELAXED),
		     __atomic_load_n(&brk_high, __ATOMIC_RELAXED), MRCACHE_CAUSE_DISCARD);
	note_break((uintptr_t)__sbrk(0));
	for (unsigned i = 0; i < SEEN_HEAPS; i++) {
		uintptr_t h = __atomic_load_n(&seen_heaps[i], __ATOMIC_RELAXED);

		if (h)
			hooks_report(h, h + HEAP_MAX, MRCACHE_CAUSE_DISCARD);
	}
	return rc;
}

void hooks_malloc_note_heap(uintptr_t heap_lo)
{
	if (heap_lo)
		note_break(heap_lo);
	note_break((uintptr_t)__sbrk(0));
}
