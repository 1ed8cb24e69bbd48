/* SPDX-License-Identifier: MIT */
/*
 * svg.c - a small SVG writer and the plots of a run: per workload, one
 * group of horizontal bars per parameter, one bar per peer, the median of
 * the workload's first metric, each bar labelled with its value.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "bench.h"

#define SVG_WIDTH 760
#define SVG_LABEL 190		/* left column: peer names */
#define SVG_BAR 16
#define SVG_GAP 4
#define SVG_GROUP_GAP 14
#define SVG_TOP 48

static void svg_text(FILE *f, double x, double y, const char *anchor,
		     int size, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void svg_text(FILE *f, double x, double y, const char *anchor,
		     int size, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
		"font-size=\"%d\">", x, y, anchor, size);
	for (const char *s = buf; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
	fputs("</text>\n", f);
}

static void svg_rect(FILE *f, double x, double y, double w, double h,
		     const char *fill)
{
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"%s\"/>\n", x, y, w, h, fill);
}

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

static int plot_workload(const struct bench_run *r, const struct workload *w,
			 const char *dir)
{
	char path[512];
	double max = 0, y;
	int bars = 0, groups = 0;
	long last = -1;
	FILE *f;

	for (int i = 0; i < r->nres; i++) {
		const struct bench_result *x = &r->res[i];

		if (x->w != w || x->status < 0)
			continue;
		bars++;
		if (x->param != last)
			groups++;
		last = x->param;
		if (x->med[0] > max)
			max = x->med[0];
	}
	if (!bars)
		return 0;
	snprintf(path, sizeof(path), "%s/bench-%s.svg", dir, w->name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "mrc-bench: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" font-family=\"sans-serif\">\n", SVG_WIDTH,
		SVG_TOP + bars * (SVG_BAR + SVG_GAP) + groups * SVG_GROUP_GAP + 24);
	svg_rect(f, 0, 0, SVG_WIDTH,
		 SVG_TOP + bars * (SVG_BAR + SVG_GAP) + groups * SVG_GROUP_GAP + 24,
		 "white");
	svg_text(f, 10, 20, "start", 15, "%s: %s", w->name, w->what);
	svg_text(f, 10, 38, "start", 11, "median of %d rounds, %s (%s is better); "
		 "%d CPUs, %s", r->rounds, w->metric[0],
		 w->lower_is_better ? "lower" : "higher", r->nproc, r->kernel);
	y = SVG_TOP;
	last = -1;
	for (int i = 0; i < r->nres; i++) {
		const struct bench_result *x = &r->res[i];
		double len;

		if (x->w != w || x->status < 0)
			continue;
		if (x->param != last) {
			y += SVG_GROUP_GAP;
			svg_text(f, 10, y - 2, "start", 11, "%s = %ld",
				 w->param_name, x->param);
			last = x->param;
		}
		len = max > 0 ? (SVG_WIDTH - SVG_LABEL - 90) * x->med[0] / max : 0;
		svg_text(f, SVG_LABEL - 6, y + SVG_BAR - 4, "end", 12, "%s",
			 x->peer);
		svg_rect(f, SVG_LABEL, y, len > 0 ? len : 0, SVG_BAR,
			 peer_colour(x->peer));
		svg_text(f, SVG_LABEL + (len > 0 ? len : 0) + 4, y + SVG_BAR - 4,
			 "start", 11, "%.4g", x->med[0]);
		y += SVG_BAR + SVG_GAP;
	}
	fprintf(f, "</svg>\n");
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
