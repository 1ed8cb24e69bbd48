/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/none.c - no monitor: only mrcache_invalidate() changes a word.
 * The words live in the regions (user side); a generation still changes per
 * watch so the protocol holds.
 */
#include <errno.h>
#include <stdlib.h>
#include "monitor/monitor.h"

static uint64_t none_generation;

static int none_start(struct mrcache *cache, struct mrc_monitor **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void none_stop(struct mrc_monitor *mon)
{
	free(mon);
}

static int none_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		      uint64_t cookie, struct mrc_watch *w)
{
	uint64_t gen = __atomic_add_fetch(&none_generation, 1, __ATOMIC_RELAXED);

	w->expected = MRC_WORD(gen);
	__atomic_store_n(&w->local, w->expected, __ATOMIC_SEQ_CST);
	w->word = &w->local;
	return 0;
}

static void none_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	__atomic_fetch_and(&w->local, ~MRC_WORD_VALID, __ATOMIC_RELAXED);
}

const struct mrc_monitor_ops mrc_monitor_none_ops = {
	.kind = MRCACHE_MONITOR_NONE,
	.name = "none",
	.start = none_start,
	.stop = none_stop,
	.watch = none_watch,
	.unwatch = none_unwatch,
};
