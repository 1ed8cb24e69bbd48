/* SPDX-License-Identifier: MIT */
/* hist.c - percentiles of log2 histograms and of sample arrays. */
#include <math.h>
#include <stdlib.h>
#include "hist.h"

uint64_t mp_hist_count(const uint64_t *hist, int nbuckets)
{
	uint64_t n = 0;

	for (int b = 0; b < nbuckets; b++)
		n += hist[b];
	return n;
}

double mp_hist_percentile(const uint64_t *hist, int nbuckets, double p)
{
	uint64_t n = mp_hist_count(hist, nbuckets), seen = 0;
	double rank;

	if (!n)
		return 0;
	rank = p / 100.0 * (double)n;
	for (int b = 0; b < nbuckets; b++) {
		if (!hist[b])
			continue;
		if ((double)(seen + hist[b]) >= rank) {
			double frac = (rank - (double)seen) / (double)hist[b];

			if (frac < 0)
				frac = 0;
			return ldexp(1.0, b) * pow(2.0, frac);
		}
		seen += hist[b];
	}
	return ldexp(1.0, nbuckets);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void mp_sort_u64(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

uint64_t mp_percentile_sorted(const uint64_t *sorted, size_t n, double p)
{
	size_t i;

	if (!n)
		return 0;
	i = (size_t)ceil(p / 100.0 * (double)n);
	if (i)
		i--;
	return sorted[i < n ? i : n - 1];
}
