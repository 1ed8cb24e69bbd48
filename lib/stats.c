/* SPDX-License-Identifier: MIT */
/* stats.c - the statistics snapshot and its printed form. */
#include <errno.h>
#include <inttypes.h>
#include "cache.h"

int mrcache_stats_get(struct mrcache *c, struct mrcache_stats *s)
{
	int rc;

	if (!c || !s)
		return -EINVAL;
	rc = mrc_cache_reentered(c, "mrcache_stats_get");
	if (rc)
		return rc;
	mrc_cache_lock(c);
	*s = c->st;
	s->regions = c->nregions;
	s->bytes = c->nbytes;
	mrc_cache_unlock(c);
	for (int i = 0; i < MRC_STRIPES; i++) {
		s->hits += __atomic_load_n(&c->stripes[i].hits, __ATOMIC_RELAXED);
		s->subrange_hits += __atomic_load_n(&c->stripes[i].subrange_hits, __ATOMIC_RELAXED);
	}
	return 0;
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
	fprintf(out, "mrcache stats (monitor %s)\n", mrcache_monitor_name(s.monitor));
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
