/* SPDX-License-Identifier: MIT */
/*
 * hooks/malloc.c - what glibc's allocator unmaps behind the application's
 * back: free() of an mmapped block, heap trimming by free(), realloc() and
 * malloc_trim().  glibc does it through internal aliases (__munmap,
 * __madvise, __sbrk) that no interposed munmap can see, so libmrcache
 * wraps the allocator's entry points instead and works out, from glibc's
 * chunk header and the program break, what the real call gave back:
 *
 *   mmapped chunk (IS_MMAPPED)  its whole mapping, exactly
 *   main arena (brk heap)       [break after, highest break) when it shrank
 *   thread arena (mmapped heap) the heap's 64 MiB reservation, when the
 *                               freed block could reach the top (not a
 *                               fastbin-sized one; see may_trim); glibc
 *                               discards the heap's top
 *                               with MADV_DONTNEED or unmaps the heap
 *   malloc_trim()               the whole main heap and every thread heap
 *                               seen so far (it discards free pages anywhere):
 *                               those of trimming frees, and of every watch
 *                               (a block freed without a trim is there too)
 *
 * Chunks are decoded only when the next free() is glibc's own.  With
 * another allocator (a sanitizer's, jemalloc...) free() and realloc()
 * report the pages wholly inside the block given back, and what that
 * allocator unmaps through the PLT is seen by hooks/intercept.c.  The
 * definitions are weak so a fully static link against glibc keeps glibc's
 * (and loses this part; docs/monitors.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "monitor/hooks.h"

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
/* glibc trims only after freeing (with its free neighbours) this much... */
#define CONSOLIDATION_THRESHOLD	65536ul
/* ...and never when freeing a chunk this small: it goes to the tcache or a
 * fastbin (the largest fastbin chunk under the default M_MXFAST). */
#define FASTBIN_MAX		(64 * sizeof(size_t) / 4)

/* The HEAP_MAX windows that may hold a thread heap, for malloc_trim():
 * those of trimming frees, and those of watched ranges outside the brk
 * heap.  Which of them really are heaps is read at malloc_trim() time,
 * not at the watch: reading a heap's header costs two system calls
 * (getpid, process_vm_readv), a watch must cost none.  An open-addressing
 * set, so a watch's lookup is one probe or a few; a window it cannot
 * place within WINDOW_PROBES sets windows_overflow, and malloc_trim() then
 * invalidates everything.  (8 arenas per core, each of one heap or more,
 * plus the windows of mmapped registrations: 64 GiB of them fill a 1/4.) */
#define HEAP_WINDOWS 4096	/* a power of two */
#define WINDOW_PROBES 64
static uintptr_t heap_windows[HEAP_WINDOWS];	/* atomic; 0: free */
static int windows_overflow;	/* atomic */
static uintptr_t brk_high;	/* atomic: highest break seen */
static uintptr_t main_heap_lo;	/* atomic: lowest break seen */

struct chunk_info {
	uintptr_t map_lo, map_hi;	/* IS_MMAPPED: the mapping */
	uintptr_t heap;			/* NON_MAIN_ARENA: its heap, if it may trim */
	int mmapped;
	int main_arena;			/* main arena: check the break after */
};

static void *next_free_fn, *next_realloc_fn, *next_trim_fn;
/* Who is looking up the next free/realloc with dlsym() (0: nobody). */
static int resolving;
static pthread_t resolver;

static void leak(void *p)
{
}

/* Look up the next definition of `name` once.  dlsym() may free or
 * realloc in turn, even before a sanitizer's runtime is initialised: such
 * nested calls get `nested` (whose memory it is is not known yet); other
 * threads wait for the lookup. */
static void *next_alloc_fn(void **slot, const char *name, void *nested, void *fallback)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	int expect = 0;

	if (fn)
		return fn;
	if (__atomic_load_n(&resolving, __ATOMIC_ACQUIRE) &&
	    pthread_equal(resolver, pthread_self()))
		return nested;
	if (!__atomic_compare_exchange_n(&resolving, &expect, 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED)) {
		while (!(fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE)))
			sched_yield();
		return fn;
	}
	resolver = pthread_self();
	fn = hooks_next(slot, name);
	if (!fn) {
		fn = fallback;
		__atomic_store_n(slot, fn, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&resolving, 0, __ATOMIC_RELEASE);
	return fn;
}

static void (*next_free(void))(void *)
{
	return (void (*)(void *))next_alloc_fn(&next_free_fn, "free", (void *)leak,
					       (void *)__libc_free);
}

static void *(*next_realloc(void))(void *, size_t)
{
	return (void *(*)(void *, size_t))next_alloc_fn(&next_realloc_fn, "realloc",
							(void *)__libc_realloc,
							(void *)__libc_realloc);
}

/* The usable size of a block of another allocator, if that allocator
 * provides malloc_usable_size itself (glibc's on a foreign block would
 * crash); NULL otherwise, and then free() reports nothing for it. */
static size_t (*foreign_usable_size)(void *);

static void find_foreign_usable_size(void)
{
	void *fn = dlsym(RTLD_NEXT, "malloc_usable_size");
	Dl_info of_free, of_size;

	if (fn && dladdr((void *)next_free(), &of_free) && dladdr(fn, &of_size) &&
	    of_free.dli_fbase == of_size.dli_fbase)
		__atomic_store_n(&foreign_usable_size, (size_t (*)(void *))fn, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void hooks_malloc_init(void)
{
	next_free();
	next_realloc();
	if (!hooks_malloc_is_glibc())
		find_foreign_usable_size();
}

static int glibc_malloc = -1;	/* atomic: is the next free() glibc's? */

int hooks_malloc_is_glibc(void)
{
	int is = __atomic_load_n(&glibc_malloc, __ATOMIC_RELAXED);

	if (is < 0) {
		is = next_free() == __libc_free;
		if (__atomic_load_n(&next_free_fn, __ATOMIC_ACQUIRE))
			__atomic_store_n(&glibc_malloc, is, __ATOMIC_RELAXED);
	}
	return is;
}

/* The program break without a call: glibc's cached value, which its
 * __sbrk keeps (NULL only before the first brk). */
extern void *__curbrk;

static uintptr_t current_break(void)
{
	void *brk = __atomic_load_n(&__curbrk, __ATOMIC_RELAXED);

	return (uintptr_t)(brk ? brk : __sbrk(0));
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

static unsigned window_slot(uintptr_t window)
{
	/* Fibonacci hashing of the window number: neighbours spread. */
	return (unsigned)(((uint64_t)(window / HEAP_MAX) * 0x9e3779b97f4a7c15ull) >> 52) &
	       (HEAP_WINDOWS - 1);
}

/* Two threads adding the same window at once each find the other's CAS
 * or place it once: no duplicates.  Window 0 is no heap (mmap_min_addr). */
static void note_window(uintptr_t window)
{
	unsigned slot = window_slot(window);

	if (!window)
		return;
	for (unsigned i = 0; i < WINDOW_PROBES; i++, slot = (slot + 1) & (HEAP_WINDOWS - 1)) {
		uintptr_t seen = __atomic_load_n(&heap_windows[slot], __ATOMIC_ACQUIRE);

		if (!seen && __atomic_compare_exchange_n(&heap_windows[slot], &seen, window, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return;
		if (seen == window)
			return;
	}
	__atomic_store_n(&windows_overflow, 1, __ATOMIC_RELEASE);
}

/* glibc's heap_info, at the start of every thread heap (malloc/arena.c,
 * stable since 2.3; later fields left out). */
struct heap_head {
	void *ar_ptr;		/* its arena */
	uintptr_t prev;		/* the arena's previous heap, or 0 */
	size_t size, mprotect_size;
};

/* Does a thread heap start at `heap` (HEAP_MAX aligned)?  Read with
 * process_vm_readv, which fails cleanly where nothing readable is mapped;
 * where that call is refused (seccomp), assume so: a heap too many only
 * widens malloc_trim's report. */
static int is_thread_heap(uintptr_t heap)
{
	struct heap_head h;
	struct iovec local = { &h, sizeof(h) }, remote = { (void *)heap, sizeof(h) };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	if (n < 0)
		return errno != EFAULT && errno != ESRCH;
	return n == sizeof(h) && h.ar_ptr && !((uintptr_t)h.ar_ptr & 7) &&
	       !(h.prev & (HEAP_MAX - 1)) && h.size && h.size <= h.mprotect_size &&
	       h.mprotect_size <= HEAP_MAX;
}

/* A range about to be watched may lie in a thread heap that no trimming
 * free has shown: a block freed there without a trim is discarded by the
 * next malloc_trim() all the same. */
static void note_window_of(uintptr_t addr)
{
	if (addr >= __atomic_load_n(&main_heap_lo, __ATOMIC_RELAXED) &&
	    addr < __atomic_load_n(&brk_high, __ATOMIC_RELAXED))
		return;		/* the brk heap */
	note_window(addr & ~(HEAP_MAX - 1));
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
	} else if (!(size_word & CHUNK_NON_MAIN_ARENA)) {
		ci->main_arena = 1;
	} else if ((size_word & ~CHUNK_FLAGS) > FASTBIN_MAX && may_trim(chunk, size_word)) {
		ci->heap = chunk & ~(HEAP_MAX - 1);
		note_window(ci->heap);
	}
}

static void chunk_after(const struct chunk_info *ci, enum mrcache_cause cause)
{
	if (ci->mmapped) {
		hooks_report(ci->map_lo, ci->map_hi, cause);
	} else if (ci->heap) {
		hooks_report(ci->heap, ci->heap + HEAP_MAX, MRCACHE_CAUSE_DISCARD);
	} else if (ci->main_arena) {
		/* Two loads when nothing shrank.  Compared with brk_high, not
		 * a break read before the call: every registration in the
		 * heap lies below brk_high (raised at every watch), and a
		 * trim racing with another thread's growth still shows. */
		uintptr_t now = current_break(), high;

		if (now >= __atomic_load_n(&brk_high, __ATOMIC_RELAXED))
			return;
		high = __atomic_exchange_n(&brk_high, now, __ATOMIC_RELAXED);
		if (now < high)
			hooks_report(now, high, MRCACHE_CAUSE_UNMAP);
		note_break(now);
	}
}

static size_t usable_size(void *p)
{
	size_t (*fn)(void *) = __atomic_load_n(&foreign_usable_size, __ATOMIC_ACQUIRE);

	return fn ? fn(p) : 0;
}

/* Another allocator (a sanitizer's, jemalloc...) may unmap a block with
 * raw syscalls: without its layout, report the pages that lay wholly
 * inside what was given back, [block+from, block+n) (n: the usable size,
 * read before the call).  No other live block can use those pages, so only
 * a registration of memory that was just freed can be dropped. */
static void foreign_range(uintptr_t block, size_t from, size_t n, struct chunk_info *ci)
{
	uintptr_t page = (uintptr_t)getpagesize();
	uintptr_t lo = (block + from + page - 1) & ~(page - 1);
	uintptr_t hi = (block + n) & ~(page - 1);

	memset(ci, 0, sizeof(*ci));
	if (from < n && hi > lo) {
		ci->mmapped = 1;
		ci->map_lo = lo;
		ci->map_hi = hi;
	}
}

__attribute__((weak)) void free(void *p)
{
	void (*real)(void *) = next_free();
	struct chunk_info ci;

	hooks_probe_note();
	if (!p || !hooks_wanted()) {
		real(p);
		return;
	}
	if (hooks_malloc_is_glibc())
		chunk_before(p, &ci);
	else
		foreign_range((uintptr_t)p, 0, usable_size(p), &ci);
	real(p);
	chunk_after(&ci, MRCACHE_CAUSE_UNMAP);
}

__attribute__((weak)) void *realloc(void *p, size_t size)
{
	int glibc = hooks_malloc_is_glibc();
	uintptr_t old = (uintptr_t)p;
	struct chunk_info ci;
	size_t n = 0;
	void *q;

	hooks_probe_note();
	if (!p || !hooks_wanted())
		return next_realloc()(p, size);
	if (glibc)
		chunk_before(p, &ci);
	else
		n = usable_size(p);
	q = next_realloc()(p, size);
	if (!q && size)
		return NULL;	/* failed: the old block is intact */
	if (!glibc)		/* moved: all of it; shrunk in place: the tail */
		foreign_range(old, (uintptr_t)q == old ? size : 0, n, &ci);
	else if (ci.mmapped && (uintptr_t)q == old && ci.map_hi - ci.map_lo <= size + CHUNK_HDR)
		ci.mmapped = 0;	/* grown in place by mremap: same pages */
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

	hooks_probe_note();
	if (watching)
		note_break(current_break());
	rc = real ? real(pad) : 0;
	if (!watching)
		return rc;
	/* glibc discards free pages anywhere in every arena. */
	hooks_report(__atomic_load_n(&main_heap_lo, __ATOMIC_RELAXED),
		     __atomic_load_n(&brk_high, __ATOMIC_RELAXED), MRCACHE_CAUSE_DISCARD);
	note_break(current_break());
	if (__atomic_load_n(&windows_overflow, __ATOMIC_ACQUIRE)) {
		/* Windows beyond the set: any range may have been a heap. */
		hooks_report(0, UINTPTR_MAX, MRCACHE_CAUSE_DISCARD);
		return rc;
	}
	for (unsigned i = 0; i < HEAP_WINDOWS; i++) {
		uintptr_t h = __atomic_load_n(&heap_windows[i], __ATOMIC_ACQUIRE);

		if (h && is_thread_heap(h))
			hooks_report(h, h + HEAP_MAX, MRCACHE_CAUSE_DISCARD);
	}
	return rc;
}

void hooks_malloc_note_heap(uintptr_t heap_lo)
{
	if (heap_lo)
		note_break(heap_lo);
	note_break(current_break());
}

void hooks_malloc_note_watch(uintptr_t start, uintptr_t end)
{
	note_break(current_break());
	if (end <= start || !hooks_malloc_is_glibc())
		return;
	note_window_of(start);
	if (((end - 1) ^ start) & ~(HEAP_MAX - 1))
		note_window_of(end - 1);
}
