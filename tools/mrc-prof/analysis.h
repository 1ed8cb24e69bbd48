/* SPDX-License-Identifier: MIT */
/*
 * analysis.h - everything the outputs show, computed once from a trace:
 * the summary, one simulated cache per configuration, and how many
 * registrations each VM call invalidated (under the first configuration).
 */
#ifndef MP_ANALYSIS_H
#define MP_ANALYSIS_H

#include "sim.h"
#include "summary.h"
#include "trace.h"

struct mp_analysis {
	const struct mp_trace *t;
	struct mp_summary sum;
	struct mp_sim_config *conf;
	struct mp_sim_result *res;
	size_t nconf;
	uint32_t *inval;		/* per event, under conf[0] */
	int library_io;			/* libraries' I/O counted as the program's */
};

/* conf: nconf >= 1 configurations (copied).  0 or -ENOMEM. */
int mp_analysis_build(struct mp_analysis *a, const struct mp_trace *t,
		      const struct mp_sim_config *conf, size_t nconf);
void mp_analysis_free(struct mp_analysis *a);

#endif
