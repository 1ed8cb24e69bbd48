/* SPDX-License-Identifier: MIT */
/*
 * verdict.h - the answer for a program whose I/O gives a cache little to
 * do: how much of the run its VM calls took, and from which block size a
 * registration (cached or not) beats copying through a pre-registered
 * bounce buffer under a configuration's cost model.
 */
#ifndef MP_VERDICT_H
#define MP_VERDICT_H

#include <stdio.h>
#include "analysis.h"

/* Smallest block size for which registering every use costs less than
 * copying it, and for which a cache hitting `hit_rate` of its uses does;
 * 0 when registration never pays under the model. */
double mp_breakeven_bytes(const struct mp_sim_config *c, double hit_rate);
/* The cache's savings are small next to the run (< 1% of it), or there
 * was nothing to cache. */
int mp_verdict_small(const struct mp_analysis *a, size_t conf);
/* Lines for the text report. */
void mp_verdict_text(FILE *f, const struct mp_analysis *a);

#endif
