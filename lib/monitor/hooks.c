/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/hooks.c - the hooks monitor: libmrcache's own definitions of the
 * unmapping calls (hooks/intercept.c) and of free/realloc/malloc_trim
 * (hooks/malloc.c) report to every cache in hooks_caches.
 *
 * Starting it is one atomic store into that table: nothing is patched, so
 * it is safe while other threads run.  A start first checks that calls
 * made from the application's side really reach libmrcache's definitions
 * (they do not when libmrcache-hooks is not loaded, when it was dlopen()ed,
 * or when libc was found first; free() does not in a fully static
 * program); it fails with -ENOTSUP otherwise, saying which
 * (libmrcache-hooks' constructor sets hooks_loaded).
 *
 * Words are user-side: mrc_cache_unmapped() clears them in the unmapping
 * thread after the real call returns.  watch() waits for nothing: an unmap
 * running during a registration reports after its real call, so it clears
 * the new region's word after the cache's re-check at the latest, and the
 * region never hits again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cache/cache.h"
#include "monitor/hooks.h"

/* Defined by libmrcache-hooks (hooks/malloc.c), which a program links or
 * preloads to use this monitor: weak, so libmrcache works without it. */
#pragma weak hooks_malloc_is_glibc
#pragma weak hooks_malloc_note_heap
#pragma weak hooks_malloc_note_watch

static void note_heap(uintptr_t heap_lo)
{
	if (hooks_malloc_note_heap)
		hooks_malloc_note_heap(heap_lo);
}

/* glibc's own free(), for telling it from another allocator's. */
extern void __libc_free(void *ptr);

static uint64_t hooks_generation;
static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int probe_result;
/* Why the probe failed: munmap() does not reach libmrcache-hooks, or (a
 * fully static program) munmap() does and glibc's free() bypasses it. */
static int probe_glibc_free;

struct hooks_monitor {
	struct mrc_monitor base;
	int slot;
};

/* The start of the brk heap, "[heap]" in /proc/self/maps (0 if none). */
static uintptr_t brk_heap_start(void)
{
	char line[512];
	unsigned long lo, hi;
	uintptr_t start = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			start = lo;
	fclose(f);
	return start;
}

/* Do munmap() and free() called from outside land in libmrcache?  The
 * calls below bind like the application's: through the PLT of a shared
 * libmrcache, or statically in a program linked with libmrcache.a.
 *
 * A free() that does not land here but is glibc's own is a fully static
 * program: libmrcache-hooks' free() is weak so that such a link succeeds,
 * and glibc's free() then unmaps blocks through its internal __munmap,
 * which nothing interposes.  Every free() of a registered block would go
 * unseen (316 stale gets in a churn test): refuse to start.  Another
 * allocator in front (a sanitizer's, jemalloc) unmaps through the PLT or
 * keeps freed memory for a while: a warning, as before. */
static void probe(void)
{
	size_t page = (size_t)getpagesize();
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *volatile block;	/* the compiler may drop a malloc/free pair */
	void (*volatile app_free)(void *), (*volatile glibc_free)(void *);
	unsigned before;
	int free_seen;

	if (p == MAP_FAILED) {
		probe_result = -errno;
		return;
	}
	__atomic_store_n(&hooks_probing, 1, __ATOMIC_SEQ_CST);
	before = __atomic_load_n(&hooks_probe_hits, __ATOMIC_SEQ_CST);
	munmap(p, page);
	if (__atomic_load_n(&hooks_probe_hits, __ATOMIC_SEQ_CST) == before) {
		__atomic_store_n(&hooks_probing, 0, __ATOMIC_SEQ_CST);
		probe_result = -ENOTSUP;
		return;
	}
	before = __atomic_load_n(&hooks_probe_hits, __ATOMIC_SEQ_CST);
	block = malloc(1);
	free(block);
	free_seen = __atomic_load_n(&hooks_probe_hits, __ATOMIC_SEQ_CST) != before;
	/* Through volatile: glibc's free is an alias of __libc_free, and a
	 * compiler may fold the comparison of two symbols to "different"
	 * (clang does). */
	app_free = free;
	glibc_free = __libc_free;
	if (!free_seen && app_free == glibc_free) {
		probe_glibc_free = 1;
		probe_result = -ENOTSUP;
	} else if (!free_seen) {
		mrc_log(1, "monitor hooks: free() does not reach libmrcache: "
			"blocks its allocator unmaps inside free() are not seen");
	} else if (!hooks_malloc_is_glibc || !hooks_malloc_is_glibc()) {
		mrc_log(1, "monitor hooks: the allocator is not glibc's: only "
			"its munmap/madvise calls through the PLT are seen");
	}
	__atomic_store_n(&hooks_probing, 0, __ATOMIC_SEQ_CST);
	note_heap(brk_heap_start());
}

int hooks_interposed(void)
{
	pthread_once(&probe_once, probe);
	return probe_result;
}

static void explain(int level)
{
	if (probe_glibc_free)
		mrc_log(level, "monitor hooks: free() is glibc's own and does not reach "
			"libmrcache-hooks (a fully static program keeps glibc's "
			"free(), which unmaps blocks unseen): link the program "
			"dynamically against libc, or use another monitor");
	else if (!__atomic_load_n(&hooks_loaded, __ATOMIC_ACQUIRE))
		mrc_log(level, "monitor hooks: libmrcache-hooks is not loaded in this "
			"process (a linker with --as-needed drops it from a program "
			"that calls none of its functions itself): link it with "
			"`pkg-config --libs mrcache-hooks` or with -Wl,--push-state,"
			"--no-as-needed -lmrcache-hooks -Wl,--pop-state, or run with "
			"LD_PRELOAD=libmrcache-hooks.so");
	else
		mrc_log(level, "monitor hooks: libmrcache-hooks is loaded, but munmap() "
			"does not reach it (it was loaded with dlopen(), or after libc): "
			"link the program with it, or run with "
			"LD_PRELOAD=libmrcache-hooks.so");
}

static int hooks_start(struct mrcache *cache, struct mrc_monitor **out)
{
	struct hooks_monitor *m;

	if (hooks_interposed()) {
		explain(cache->cfg.monitor == MRCACHE_MONITOR_HOOKS ? 0 : 1);
		return probe_result;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->slot = hooks_fanout_add(&hooks_caches, cache);
	if (m->slot < 0) {
		mrc_log(0, "monitor hooks: more than %d caches use it", HOOKS_FANOUT_SLOTS);
		free(m);
		return -ENOSPC;
	}
	*out = &m->base;
	return 0;
}

static void hooks_stop(struct mrc_monitor *mon)
{
	struct hooks_monitor *m = (struct hooks_monitor *)mon;

	hooks_fanout_remove(&hooks_caches, m->slot, m->base.cache);
	free(m);
}

static int hooks_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		       uint64_t cookie, struct mrc_watch *w)
{
	uint64_t gen = __atomic_add_fetch(&hooks_generation, 1, __ATOMIC_RELAXED);

	if (hooks_malloc_note_watch)
		hooks_malloc_note_watch(start, end);
	w->expected = MRC_WORD(gen);
	w->token = 0;
	w->word = &w->local;
	__atomic_store_n(&w->local, w->expected, __ATOMIC_SEQ_CST);
	return 0;
}

static void hooks_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	__atomic_fetch_and(&w->local, ~MRC_WORD_VALID, __ATOMIC_RELAXED);
}

const struct mrc_monitor_ops mrc_monitor_hooks_ops = {
	.kind = MRCACHE_MONITOR_HOOKS,
	.name = "hooks",
	.start = hooks_start,
	.stop = hooks_stop,
	.watch = hooks_watch,
	.unwatch = hooks_unwatch,
};
