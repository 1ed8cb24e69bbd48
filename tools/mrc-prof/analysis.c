/* SPDX-License-Identifier: MIT */
/* analysis.c - summary plus simulated caches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "analysis.h"

int mp_analysis_build(struct mp_analysis *a, const struct mp_trace *t,
		      const struct mp_sim_config *conf, size_t nconf)
{
	int err;

	memset(a, 0, sizeof(*a));
	a->t = t;
	a->nconf = nconf;
	a->conf = calloc(nconf, sizeof(*a->conf));
	a->res = calloc(nconf, sizeof(*a->res));
	a->inval = calloc(t->nev + 1, sizeof(*a->inval));
	if (!a->conf || !a->res || !a->inval) {
		mp_analysis_free(a);
		return -ENOMEM;
	}
	memcpy(a->conf, conf, nconf * sizeof(*conf));
	err = mp_summary_build(t, &a->sum);
	for (size_t i = 0; !err && i < nconf; i++)
		err = mp_cache_run(t, &a->conf[i], &a->res[i], i ? NULL : a->inval);
	if (err) {
		mp_analysis_free(a);
		return err;
	}
	/* Attribute invalidations to the call sites that caused them. */
	for (size_t i = 0; i < t->nev; i++) {
		const struct mp_event *e = &t->ev[i];

		if (!a->inval[i])
			continue;
		for (size_t s = 0; s < a->sum.nsites; s++)
			if (a->sum.sites[s].site == e->site && a->sum.sites[s].kind == e->kind) {
				a->sum.sites[s].invalidated += a->inval[i];
				break;
			}
	}
	return 0;
}

void mp_analysis_free(struct mp_analysis *a)
{
	mp_summary_free(&a->sum);
	free(a->conf);
	free(a->res);
	free(a->inval);
	memset(a, 0, sizeof(*a));
}
