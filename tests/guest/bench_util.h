/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - the clock and the median the guest benchmarks share
 * (bench-mrmon, bench-mrmon-recovery).  In the TCG guest only ratios
 * within one run mean anything.
 */
#ifndef MRMON_BENCH_UTIL_H
#define MRMON_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v. */
static inline double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp);
	return v[n / 2];
}

#endif
