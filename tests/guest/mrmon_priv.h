/* SPDX-License-Identifier: MIT */
/*
 * mrmon_priv.h - what the module's robustness tests need beside
 * mrmon_test.h: the module's reference count and a monotonic clock.
 * Functions return 0 or -errno unless they return a value.
 */
#ifndef MRMON_PRIV_H
#define MRMON_PRIV_H

#include <limits.h>
#include <stdio.h>
#include <time.h>

static inline double priv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* /sys/module/mrmon/refcnt; LONG_MIN if the module is not loaded (the
 * count itself can read negative after an unbalanced module_put). */
static inline long priv_module_refs(void)
{
	FILE *f = fopen("/sys/module/mrmon/refcnt", "r");
	long v = -1;

	if (!f)
		return LONG_MIN;
	if (fscanf(f, "%ld", &v) != 1)
		v = LONG_MIN;
	fclose(f);
	return v;
}

#endif
