/* SPDX-License-Identifier: MIT */
/*
 * stats.c - the statistics snapshot and its printed form.
 *
 * The snapshot is copied out to the size the program's struct has
 * (docs/api.md): a smaller, older struct gets the counters it knows, a
 * larger, newer one gets 0 in those this library does not keep.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "cache/cache.h"

static void snapshot(struct mrcache *c, struct mrcache_stats *s)
{
	mrc_cache_lock(c);
	*s = c->st;
	s->regions = c->nregions;
	s->bytes = c->nbytes;
	mrc_cache_unlock(c);
	mrc_threads_sum(c->threads, &s->hits, &s->subrange_hits);
}

int mrcache_stats_get_sized(struct mrcache *c, struct mrcache_stats *out, size_t size)
{
	struct mrcache_stats s;
	size_t n = size < sizeof(s) ? size : sizeof(s);
	int rc;

	if (!c || !out)
		return -EINVAL;
	rc = mrc_cache_reentered(c, "mrcache_stats_get");
	if (rc)
		return rc;
	snapshot(c, &s);
	memcpy(out, &s, n);
	memset((char *)out + n, 0, size - n);
	return (int)n;
}

int mrcache_stats_print(struct mrcache *c, FILE *out)
{
	struct mrcache_stats s;
	uint64_t inv = 0;
	int rc = mrcache_stats_get(c, &s);

	if (rc)
		return rc;
	if (!out)
		return -EINVAL;
	for (int i = 0; i < MRCACHE_CAUSE_COUNT_; i++)
		inv += s.invalidations[i];
	if (c->name[0])
		fprintf(out, "mrcache stats of %s (monitor %s%s)\n", c->name,
			mrcache_monitor_name(s.monitor), c->disabled ? ", disabled" : "");
	else
		fprintf(out, "mrcache stats (monitor %s%s)\n", mrcache_monitor_name(s.monitor),
			c->disabled ? ", disabled" : "");
	fprintf(out, "  hits %" PRIu64 " (sub-range %" PRIu64 "), misses %" PRIu64 "\n",
		s.hits, s.subrange_hits, s.misses);
	fprintf(out, "  registrations %" PRIu64 " (failed %" PRIu64 ", %.3f ms), "
		"deregistrations %" PRIu64 " (%.3f ms)\n",
		s.registrations, s.registration_failures, s.register_ns / 1e6,
		s.deregistrations, s.deregister_ns / 1e6);
	fprintf(out, "  invalidations %" PRIu64, inv);
	for (int i = 0; i < MRCACHE_CAUSE_COUNT_; i++)
		if (s.invalidations[i])
			fprintf(out, " %s=%" PRIu64, mrcache_cause_name(i), s.invalidations[i]);
	fprintf(out, "\n  evictions %" PRIu64 ", uncached %" PRIu64 ", merges %" PRIu64
		", retries %" PRIu64 "\n", s.evictions, s.uncached, s.merges, s.retries);
	fprintf(out, "  cached now: %" PRIu64 " regions, %" PRIu64 " bytes\n", s.regions, s.bytes);
	return 0;
}
