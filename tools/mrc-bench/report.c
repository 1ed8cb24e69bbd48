/* SPDX-License-Identifier: MIT */
/* report.c - the text table and the JSON record of a run. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "json.h"
#include "bench.h"
#include "units.h"

const struct bench_result *run_find(const struct bench_run *r,
				    const char *wl, long param,
				    const char *peer)
{
	for (int i = 0; i < r->nres; i++) {
		const struct bench_result *x = &r->res[i];

		if (!strcmp(x->w->name, wl) && x->param == param &&
		    !strcmp(x->peer, peer))
			return x;
	}
	return NULL;
}

/* Right-aligned in 13 columns; times glued to their unit ("150µs") so
 * that a row stays one awk field per value. */
static void print_value(FILE *out, const struct workload *w, int m, double v)
{
	char buf[48];

	if (metric_is_ns(w->metric[m]))
		metric_format(w, m, v, "", buf, sizeof(buf));
	else if (fabs(v) >= 100000)
		snprintf(buf, sizeof(buf), "%.0f", v);
	else if (fabs(v) >= 100)
		snprintf(buf, sizeof(buf), "%.1f", v);
	else
		snprintf(buf, sizeof(buf), "%.3f", v);
	fprintf(out, " %*s%s", 13 - units_width(buf), "", buf);
}

/* Per parameter: the best valid peer, and the invalid ones left out. */
static void print_ranking(const struct bench_run *r, int first, long param,
			  FILE *out)
{
	const struct workload *w = r->res[first].w;
	char v[48];
	int invalid = 0, said = 0;

	for (int i = first; i < r->nres && r->res[i].w == w; i++) {
		const struct bench_result *x = &r->res[i];

		if (x->param != param || !result_fastest(r, x))
			continue;
		said = fprintf(out, "  fastest at %s %ld: %s (%s)", w->param_name,
			       param, x->peer,
			       metric_format(w, 0, x->med[0], " ", v, sizeof(v)));
	}
	for (int i = first; i < r->nres && r->res[i].w == w; i++) {
		const struct bench_result *x = &r->res[i];

		if (x->param != param || x->status < 0 ||
		    (!result_stale(x) && !result_state_differs(r, x)))
			continue;
		said = fprintf(out, "%s%s", invalid++ ? ", " : said ?
			       "; not ranked: " : "  not ranked: ", x->peer);
	}
	if (said)
		fprintf(out, "\n");
}

void report_rows(const struct bench_run *r, int first, FILE *out)
{
	const struct workload *w;
	char label[48];

	if (first >= r->nres)
		return;
	w = r->res[first].w;
	fprintf(out, "\n== %s: %s\n%-10s %-22s", w->name, w->what,
		w->param_name, "peer");
	for (int m = 0; m < w->nmetrics; m++)
		fprintf(out, " %13s", metric_label(w->metric[m], label, sizeof(label)));
	fprintf(out, "\n");
	for (int i = first; i < r->nres; i++) {
		const struct bench_result *x = &r->res[i];
		long stale = result_stale(x);

		if (x->status == -ENOTSUP)	/* listed once, at the top */
			continue;
		fprintf(out, "%-10ld %-22s", x->param, x->peer);
		if (x->status < 0) {
			fprintf(out, " %s\n", x->why);
			continue;
		}
		for (int m = 0; m < w->nmetrics; m++)
			print_value(out, w, m, x->med[m]);
		if (stale)
			fprintf(out, "  INVALID: served stale data");
		else if (result_took_turns(x))
			fprintf(out, "  INVALID: threads took turns (CPUs busy < %.1f)", BUSY_MIN);
		else if (result_state_differs(r, x))
			fprintf(out, "  UNEQUAL: allocator state differs from nocache's");
		fprintf(out, "\n");
	}
	for (int i = first; i < r->nres; i++)
		if (i == first || r->res[i].param != r->res[i - 1].param)
			print_ranking(r, first, r->res[i].param, out);
}

void report_targets(const struct bench_run *r, FILE *out)
{
	fprintf(out, "\n== targets (ratios measured side by side in this run)\n");
	for (int i = 0; i < r->ntargets; i++) {
		const struct bench_target *t = &r->targets[i];

		if (isnan(t->value))
			fprintf(out, "n/a  %-44s %-12s %s\n", t->name, t->goal,
				t->note);
		else
			fprintf(out, "%-4s %-44s %-12s %8.2f  %s\n",
				t->met ? "MET" : "MISS", t->name, t->goal,
				t->value, t->note);
	}
}

static void json_number(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(f, "null");
	else
		fprintf(f, "%.6g", v);
}

static void json_result(FILE *f, const struct bench_result *x)
{
	const struct workload *w = x->w;

	fprintf(f, "    {\"workload\": ");
	json_string(f, w->name);
	fprintf(f, ", \"param_name\": ");
	json_string(f, w->param_name);
	fprintf(f, ", \"param\": %ld, \"peer\": ", x->param);
	json_string(f, x->peer);
	fprintf(f, ", \"status\": \"%s\"", x->status == 0 ? "ok" :
		x->status == -ENOTSUP ? "unavailable" : "failed");
	if (x->status < 0) {
		fprintf(f, ", \"why\": ");
		json_string(f, x->why);
	}
	fprintf(f, ", \"rounds\": %d, \"metrics\": {", x->rounds);
	for (int m = 0; m < w->nmetrics && x->status == 0; m++) {
		fprintf(f, "%s", m ? ", " : "");
		json_string(f, w->metric[m]);
		fprintf(f, ": {\"median\": ");
		json_number(f, x->med[m]);
		fprintf(f, ", \"samples\": [");
		for (int s = 0; s < x->rounds; s++) {
			fprintf(f, "%s", s ? ", " : "");
			json_number(f, x->samples[m][s]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "}}");
}

int report_json(const struct bench_run *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "mrc-bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "{\n  \"tool\": \"mrc-bench\",\n  \"date\": ");
	json_string(f, r->date);
	fprintf(f, ",\n  \"command\": ");
	json_string(f, r->command);
	fprintf(f, ",\n  \"machine\": {\"nproc\": %d, \"cpu\": ", r->nproc);
	json_string(f, r->cpu);
	fprintf(f, ", \"kernel\": ");
	json_string(f, r->kernel);
	fprintf(f, "},\n  \"rounds\": %d,\n  \"results\": [\n", r->rounds);
	for (int i = 0; i < r->nres; i++) {
		json_result(f, &r->res[i]);
		fprintf(f, "%s\n", i + 1 < r->nres ? "," : "");
	}
	fprintf(f, "  ],\n  \"targets\": [\n");
	for (int i = 0; i < r->ntargets; i++) {
		const struct bench_target *t = &r->targets[i];

		fprintf(f, "    {\"name\": ");
		json_string(f, t->name);
		fprintf(f, ", \"goal\": ");
		json_string(f, t->goal);
		fprintf(f, ", \"value\": ");
		json_number(f, t->value);
		fprintf(f, ", \"met\": %s, \"note\": ",
			isnan(t->value) ? "null" : t->met ? "true" : "false");
		json_string(f, t->note);
		fprintf(f, "}%s\n", i + 1 < r->ntargets ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	if (fclose(f) != 0) {
		fprintf(stderr, "mrc-bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}
