/* SPDX-License-Identifier: MIT */
/*
 * hist.h - latency summaries: log2 histograms (what libmrcache dumps) and
 * exact percentiles of recorded samples.
 */
#ifndef MP_HIST_H
#define MP_HIST_H

#include <stddef.h>
#include <stdint.h>

#define MP_HIST_BUCKETS 40	/* bucket b holds [2^b, 2^(b+1)) ns */

static inline int mp_hist_bucket(uint64_t ns)
{
	int b = ns ? 63 - __builtin_clzll(ns) : 0;

	return b < MP_HIST_BUCKETS ? b : MP_HIST_BUCKETS - 1;
}

/* Percentile p (0..100) of a log2 histogram, interpolated geometrically
 * inside the bucket: the answer is good to a factor of two at worst. */
double mp_hist_percentile(const uint64_t *hist, int nbuckets, double p);
uint64_t mp_hist_count(const uint64_t *hist, int nbuckets);

/* Percentile p of n samples, sorted in place (nearest rank). */
uint64_t mp_percentile_sorted(const uint64_t *sorted, size_t n, double p);
void mp_sort_u64(uint64_t *v, size_t n);

#endif
