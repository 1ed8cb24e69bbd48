/* SPDX-License-Identifier: MIT */
/* hooks_fanout.c - see hooks_fanout.h. */
#include <errno.h>
#include <sched.h>
#include <unistd.h>
#include "monitor/hooks.h"

/* State shared by the monitors (here, in libmrcache) and the interposed
 * calls (hooks/, in libmrcache-hooks), which reach it through
 * libmrcache's MRCACHE_PRIVATE symbols. */
struct hooks_fanout hooks_caches;
struct hooks_fanout hooks_uffd_caches;
int hooks_probing;
unsigned hooks_probe_hits;
int hooks_loaded;

int hooks_fanout_add(struct hooks_fanout *f, struct mrcache *cache)
{
	for (uint32_t i = 0; i < HOOKS_FANOUT_SLOTS; i++) {
		struct mrcache *expect = NULL;

		if (!__atomic_compare_exchange_n(&f->cache[i], &expect, cache, 0,
						 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			continue;
		for (uint32_t used = __atomic_load_n(&f->used, __ATOMIC_RELAXED);
		     used <= i && !__atomic_compare_exchange_n(&f->used, &used, i + 1, 0,
							       __ATOMIC_SEQ_CST,
							       __ATOMIC_RELAXED);)
			;
		__atomic_fetch_add(&f->active, 1, __ATOMIC_SEQ_CST);
		return (int)i;
	}
	return -ENOSPC;
}

void hooks_fanout_remove(struct hooks_fanout *f, int slot, struct mrcache *cache)
{
	if (!__atomic_compare_exchange_n(&f->cache[slot], &cache, NULL, 0,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return;
	__atomic_fetch_sub(&f->active, 1, __ATOMIC_SEQ_CST);
	/* A notifier that saw the old pointer is inside mrc_cache_unmapped(),
	 * which takes no lock: the wait is short. */
	while (__atomic_load_n(&f->busy[slot], __ATOMIC_SEQ_CST))
		sched_yield();
}

void hooks_fanout_unmapped(struct hooks_fanout *f, uintptr_t start,
			   uintptr_t end, enum mrcache_cause cause)
{
	uintptr_t page = (uintptr_t)getpagesize();
	uint32_t used = __atomic_load_n(&f->used, __ATOMIC_ACQUIRE);

	if (end <= start)
		return;
	start &= ~(page - 1);
	if (end > UINTPTR_MAX - (page - 1))
		end = UINTPTR_MAX & ~(page - 1);
	else
		end = (end + page - 1) & ~(page - 1);
	for (uint32_t i = 0; i < used; i++) {
		struct mrcache *c;

		if (!__atomic_load_n(&f->cache[i], __ATOMIC_RELAXED))
			continue;
		/* busy before the pointer: remove() clears the pointer, then
		 * waits for busy == 0, so it sees us or we see NULL. */
		__atomic_fetch_add(&f->busy[i], 1, __ATOMIC_SEQ_CST);
		c = __atomic_load_n(&f->cache[i], __ATOMIC_SEQ_CST);
		if (c)
			mrc_cache_unmapped(c, start, end, cause);
		__atomic_fetch_sub(&f->busy[i], 1, __ATOMIC_RELEASE);
	}
}
