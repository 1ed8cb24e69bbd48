/* SPDX-License-Identifier: MIT */
/*
 * report_svg.c - the plots of a run: per workload, one group of horizontal
 * bars per parameter, one bar per peer, the median of the workload's first
 * metric, each labelled with its value in plain units.  Bars start at a
 * zero axis, so a negative median (a difference of two timings) is drawn
 * to its left.  A configuration that served stale data is a hatched grey
 * bar labelled INVALID: it is not a result, however fast.  So is a peer
 * that ran with another allocator state than no cache (churn), labelled
 * "not comparable".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "bench.h"
#include "svg.h"

#define SVG_WIDTH 760
#define SVG_LABEL 190		/* left column: peer names */
#define SVG_RIGHT 150		/* room for the value labels */
#define SVG_BAR 16
#define SVG_GAP 4
#define SVG_GROUP_GAP 14
#define SVG_TOP 48

/* One colour per peer, the same in every plot. */
static const char *peer_colour(const char *peer)
{
	static const struct { const char *name, *colour; } map[] = {
		{ "nocache", "#9e9e9e" },
		{ "ucx", "#d62728" },
		{ "mrcache/none", "#1f77b4" },
		{ "mrcache/hooks", "#2ca02c" },
		{ "mrcache/uffd", "#9467bd" },
		{ "mrcache/bpf", "#ff7f0e" },
		{ "mrcache/kernel", "#17becf" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strncmp(peer, map[i].name, strlen(map[i].name)))
			return strchr(peer, '+') ? "#bcbd22" : map[i].colour;
	return "#7f7f7f";
}

struct plot_scale {
	double lo, hi;			/* lo <= 0 <= hi */
	double x0, width;		/* where lo is drawn, pixels for hi - lo */
};

static double plot_x(const struct plot_scale *s, double v)
{
	return s->x0 + s->width * (v - s->lo) / (s->hi - s->lo);
}

static void plot_bar(FILE *f, const struct bench_run *r, const struct plot_scale *s,
		     const struct bench_result *x, double y)
{
	double zero = plot_x(s, 0), end = plot_x(s, x->med[0]);
	double left = end < zero ? end : zero, len = end < zero ? zero - end : end - zero;
	long stale = result_stale(x);
	int unequal = result_state_differs(r, x);
	char v[48];

	svg_text(f, SVG_LABEL - 6, y + SVG_BAR - 4, "end", 12, "%s", x->peer);
	if (stale || unequal)
		svg_rect_hatched(f, left, y, len, SVG_BAR);
	else
		svg_rect(f, left, y, len, SVG_BAR, peer_colour(x->peer), 1);
	metric_format(x->w, 0, x->med[0], " ", v, sizeof(v));
	if (stale)
		svg_text(f, (end > zero ? end : zero) + 4, y + SVG_BAR - 4, "start", 11,
			 "INVALID: %ld stale reads (%s)", stale, v);
	else if (unequal)
		svg_text(f, (end > zero ? end : zero) + 4, y + SVG_BAR - 4, "start", 11,
			 "not comparable: allocator state differs (%s)", v);
	else
		svg_text(f, (end > zero ? end : zero) + 4, y + SVG_BAR - 4, "start", 11,
			 "%s%s", v, result_fastest(r, x) ? "  fastest" : "");
}

static int plot_workload(const struct bench_run *r, const struct workload *w,
			 const char *dir)
{
	struct plot_scale s = { .x0 = SVG_LABEL, .width = SVG_WIDTH - SVG_LABEL - SVG_RIGHT };
	char path[512], unit[48];
	int bars = 0, groups = 0, height;
	long last = -1;
	double y;
	FILE *f;

	for (int i = 0; i < r->nres; i++) {
		const struct bench_result *x = &r->res[i];

		if (x->w != w || x->status < 0)
			continue;
		bars++;
		groups += x->param != last;
		last = x->param;
		s.hi = x->med[0] > s.hi ? x->med[0] : s.hi;
		s.lo = x->med[0] < s.lo ? x->med[0] : s.lo;
	}
	if (!bars)
		return 0;
	if (s.hi - s.lo <= 0)
		s.hi = 1;
	snprintf(path, sizeof(path), "%s/bench-%s.svg", dir, w->name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "mrc-bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	height = SVG_TOP + bars * (SVG_BAR + SVG_GAP) + groups * SVG_GROUP_GAP + 24;
	svg_begin(f, SVG_WIDTH, height);
	/* A long title gets a smaller font so that it fits the width. */
	svg_text(f, 10, 20, "start", strlen(w->name) + strlen(w->what) > 80 ? 12 : 15,
		 "%s: %s", w->name, w->what);
	svg_text(f, 10, 38, "start", 11, "median of %d rounds, %s (%s is better); "
		 "%d CPUs, %s", r->rounds, metric_label(w->metric[0], unit, sizeof(unit)),
		 w->lower_is_better ? "lower" : "higher", r->nproc, r->kernel);
	if (s.lo < 0)
		svg_line(f, plot_x(&s, 0), SVG_TOP, plot_x(&s, 0), height - 20, "#000");
	y = SVG_TOP;
	last = -1;
	for (int i = 0; i < r->nres; i++) {
		const struct bench_result *x = &r->res[i];

		if (x->w != w || x->status < 0)
			continue;
		if (x->param != last) {
			y += SVG_GROUP_GAP;
			svg_text(f, 10, y - 2, "start", 11, "%s = %ld", w->param_name,
				 x->param);
			last = x->param;
		}
		plot_bar(f, r, &s, x, y);
		y += SVG_BAR + SVG_GAP;
	}
	svg_end(f);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}

int report_svg(const struct bench_run *r, const char *dir)
{
	const struct workload *done[64];
	int ndone = 0, ret = 0;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "mrc-bench: %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < r->nres && ndone < 64; i++) {
		const struct workload *w = r->res[i].w;
		int seen = 0;

		for (int k = 0; k < ndone; k++)
			seen |= done[k] == w;
		if (seen)
			continue;
		done[ndone++] = w;
		if (plot_workload(r, w, dir) < 0)
			ret = -EIO;
	}
	return ret;
}
