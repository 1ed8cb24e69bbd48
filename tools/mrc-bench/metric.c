/* SPDX-License-Identifier: MIT */
/*
 * metric.c - how a result is shown and judged: times in the unit that fits
 * (a metric whose name has the word "ns" is a time in nanoseconds), other
 * figures as plain numbers; a result with stale reads is invalid, and one
 * whose allocator state differs from no cache's is not comparable: neither
 * is ranked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bench.h"
#include "units.h"

#define STALE_METRIC "stale reads"
#define STATE_METRIC "1M mmap"		/* allocator state (wl_churn.c) */

int metric_is_ns(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i + 2 <= n; i++)
		if (!strncmp(name + i, "ns", 2) &&
		    (i == 0 || name[i - 1] == ' ' || name[i - 1] == '/') &&
		    (i + 2 == n || name[i + 2] == ' ' || name[i + 2] == '/'))
			return 1;
	return 0;
}

/* "ns/iter" -> "time/iter", "added ns" -> "added", "CPU ns/op" ->
 * "CPU/op": the unit moves to the values. */
const char *metric_label(const char *name, char *buf, size_t len)
{
	const char *ns = name;
	size_t at;

	if (!metric_is_ns(name)) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	while ((ns = strstr(ns, "ns")) && ns != name && ns[-1] != ' ' && ns[-1] != '/')
		ns += 2;
	at = (size_t)(ns - name);
	if (at == 0)
		snprintf(buf, len, "time%s", name + 2);
	else
		snprintf(buf, len, "%.*s%s", (int)(at - 1), name, name + at + 2);
	return buf;
}

const char *metric_format(const struct workload *w, int m, double v,
			  const char *sep, char *buf, size_t len)
{
	if (metric_is_ns(w->metric[m]))
		return units_ns(v, sep, buf, len);
	return units_plain(v, buf, len);
}

int result_took_turns(const struct bench_result *x)
{
	if (x->param < 2 || x->status < 0 || x->rounds == 0)
		return 0;
	for (int m = 0; m < x->w->nmetrics; m++)
		if (!strcmp(x->w->metric[m], BUSY_METRIC))
			return x->med[m] < BUSY_MIN;
	return 0;
}

long result_stale(const struct bench_result *x)
{
	long worst = 0;

	for (int m = 0; m < x->w->nmetrics; m++) {
		if (strcmp(x->w->metric[m], STALE_METRIC))
			continue;
		for (int s = 0; s < x->rounds; s++)
			if (x->samples[m][s] > worst)
				worst = (long)x->samples[m][s];
	}
	return worst;
}

static int metric_index(const struct workload *w, const char *name)
{
	for (int m = 0; m < w->nmetrics; m++)
		if (!strcmp(w->metric[m], name))
			return m;
	return -1;
}

int result_state_differs(const struct bench_run *r, const struct bench_result *x)
{
	int m = metric_index(x->w, STATE_METRIC);
	const struct bench_result *base = run_find(r, x->w->name, x->param, "nocache");

	return m >= 0 && base && base != x && base->status == 0 && x->status == 0 &&
	       base->med[m] != x->med[m];
}

static int rankable(const struct bench_run *r, const struct bench_result *x)
{
	return x->status == 0 && x->rounds > 0 && !result_stale(x) &&
	       !result_state_differs(r, x) && !result_took_turns(x);
}

int result_fastest(const struct bench_run *r, const struct bench_result *x)
{
	int rivals = 0;

	if (!rankable(r, x))
		return 0;
	for (int i = 0; i < r->nres; i++) {
		const struct bench_result *y = &r->res[i];

		if (y == x || y->w != x->w || y->param != x->param || !rankable(r, y))
			continue;
		rivals++;
		if (x->w->lower_is_better ? y->med[0] < x->med[0] : y->med[0] > x->med[0])
			return 0;
	}
	return rivals > 0;
}
