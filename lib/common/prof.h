/* SPDX-License-Identifier: MIT */
/*
 * prof.h - latency histograms of the cache's own work, for mrc-prof.
 *
 * Off unless MRCACHE_PROF names a file prefix; then every cache records
 * log2-nanosecond histograms per kind of work and the process writes them
 * as JSON to "<prefix>.<pid>.json" at exit.  Disabled, the cost is one
 * predictable branch.
 */
#ifndef MRC_PROF_H
#define MRC_PROF_H

#include <stdint.h>
#include <time.h>

enum mrc_prof_kind {
	MRC_PROF_LOOKUP,	/* a whole get() that hit */
	MRC_PROF_MISS,		/* a whole get() that missed, registration included */
	MRC_PROF_REGISTER,	/* backend reg */
	MRC_PROF_DEREGISTER,	/* backend dereg */
	MRC_PROF_WATCH,		/* monitor watch + unwatch */
	MRC_PROF_INVALIDATE,	/* reclaiming invalidated regions */
	/* Derived by prof.c, never passed to mrc_prof_add(): a miss and an
	 * invalidation minus the register, deregister and monitor work done
	 * inside them, so that lookup, register, deregister, monitor and
	 * these two are disjoint and add up to the time spent. */
	MRC_PROF_MISS_OWN,
	MRC_PROF_INVALIDATE_OWN,
	MRC_PROF_KINDS
};

#define MRC_PROF_BUCKETS 40	/* bucket b holds [2^b, 2^(b+1)) ns */

extern int mrc_prof_on;

void mrc_prof_init(void);
/* A span of ns of any kind but a miss, an invalidation (outer spans) and
 * the derived kinds, which it ignores. */
void mrc_prof_add(enum mrc_prof_kind kind, uint64_t ns);
/* A span that began at t0 (mrc_now_ns()) and ends now; the only way in
 * for a miss or an invalidation, whose own time needs the exact start: now
 * minus ns is late by however long the thread was delayed in between (an
 * inner span ending in that gap was once not subtracted). */
void mrc_prof_add_span(enum mrc_prof_kind kind, uint64_t t0);
const char *mrc_prof_kind_name(enum mrc_prof_kind kind);

static inline uint64_t mrc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
