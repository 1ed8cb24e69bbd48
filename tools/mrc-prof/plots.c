/* SPDX-License-Identifier: MIT */
/* plots.c - the plots of a report, drawn with the tools' SVG writer. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "hist.h"
#include "libprof.h"
#include "plots.h"
#include "svg.h"

static const char *const palette[] = {
	"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
	"#7f7f7f", "#bcbd22", "#17becf",
};
#define COLOR(i) palette[(i) % (int)(sizeof(palette) / sizeof(palette[0]))]

/* --- timeline --- */

#define TL_W 1000
#define TL_LEFT 110
#define TL_COLS (TL_W - TL_LEFT - 20)
#define TL_ROW 28

static void time_label(double s, char *buf, size_t len)
{
	if (s >= 1)
		snprintf(buf, len, "%.2f s", s);
	else
		snprintf(buf, len, "%.1f ms", s * 1e3);
}

static void timeline(FILE *f, const struct mp_analysis *a)
{
	const struct mp_trace *t = a->t;
	static uint32_t bins[MP_VM_KINDS + 2][TL_COLS];
	const char *names[MP_VM_KINDS + 2];
	int rows = 0, row_of[MP_VM_KINDS + 2], h;
	double span = t->duration_ns ? (double)t->duration_ns : 1;
	char label[64];

	memset(bins, 0, sizeof(bins));
	for (size_t i = 0; i < t->nev; i++) {
		const struct mp_event *e = &t->ev[i];
		int col = (int)((double)e->t_ns / span * (TL_COLS - 1));
		int r = e->kind < MP_VM_KINDS ? e->kind
			: mp_event_is_buffer(e, 0) ? MP_VM_KINDS : -1;

		if (col < 0 || col >= TL_COLS)
			col = TL_COLS - 1;
		if (r >= 0)
			bins[r][col]++;
		if (a->inval[i])
			bins[MP_VM_KINDS + 1][col] += a->inval[i];
	}
	for (int r = 0; r < MP_VM_KINDS + 2; r++) {
		uint64_t any = 0;

		for (int c = 0; c < TL_COLS; c++)
			any += bins[r][c];
		row_of[r] = any ? rows++ : -1;
		names[r] = r < MP_VM_KINDS ? mp_kind_name((enum mp_kind)r)
			 : r == MP_VM_KINDS ? "I/O buffers" : "invalidated";
	}
	h = 60 + rows * TL_ROW + 40;
	svg_begin(f, TL_W, h);
	svg_text(f, TL_W / 2.0, 22, "middle", 15, "VM activity over time: calls per column, darker = more");
	for (int r = 0; r < MP_VM_KINDS + 2; r++) {
		double y;
		uint32_t max = 1;

		if (row_of[r] < 0)
			continue;
		y = 45 + row_of[r] * TL_ROW;
		for (int c = 0; c < TL_COLS; c++)
			if (bins[r][c] > max)
				max = bins[r][c];
		svg_text(f, TL_LEFT - 8, y + TL_ROW / 2.0 + 4, "end", 12, "%s", names[r]);
		svg_line(f, TL_LEFT, y + TL_ROW - 2, TL_LEFT + TL_COLS, y + TL_ROW - 2, "#ddd");
		for (int c = 0; c < TL_COLS; c++) {
			if (!bins[r][c])
				continue;
			svg_rect(f, TL_LEFT + c, y + 2, 1, TL_ROW - 6, COLOR(r),
				 0.25 + 0.75 * log1p(bins[r][c]) / log1p(max));
		}
	}
	for (int i = 0; i <= 5; i++) {
		double x = TL_LEFT + TL_COLS * i / 5.0, yb = 45 + rows * TL_ROW;

		svg_line(f, x, yb, x, yb + 5, "#000");
		time_label(span / 1e9 * i / 5, label, sizeof(label));
		svg_text(f, x, yb + 18, "middle", 11, "%s", label);
	}
	svg_end(f);
}

/* --- histograms --- */

#define H_W 1000
#define H_H 420
#define H_LEFT 70
#define H_BOTTOM 60

/* Counts span orders of magnitude (a million lookups, a dozen
 * invalidations): bar heights are log10(1 + count), so both show. */
static double log_height(uint64_t n, uint64_t max, double plot_h)
{
	return plot_h * log10(1.0 + (double)n) / log10(1.0 + (double)max);
}

/* totals, when not NULL, adds a bar above the plot split by each series'
 * share of the summed time (libmrcache: where the time goes). */
static void histogram(FILE *f, const char *title, const char *const *names,
		      const uint64_t *const *hist, const uint64_t *totals, int nseries)
{
	int lo = MP_HIST_BUCKETS, hi = -1, nb, top = totals ? 80 : 40;
	uint64_t max = 1, sum = 0;
	double plot_w = H_W - H_LEFT - 160, plot_h = H_H - top - H_BOTTOM, group, bar, x;
	char label[64];

	for (int s = 0; s < nseries; s++)
		for (int b = 0; b < MP_HIST_BUCKETS; b++)
			if (hist[s][b]) {
				lo = b < lo ? b : lo;
				hi = b > hi ? b : hi;
				max = hist[s][b] > max ? hist[s][b] : max;
			}
	svg_begin(f, H_W, H_H + (totals ? 40 : 0));
	svg_text(f, H_W / 2.0, 22, "middle", 15, "%s", title);
	if (hi < 0) {
		svg_text(f, H_W / 2.0, H_H / 2.0, "middle", 13, "no samples");
		svg_end(f);
		return;
	}
	if (totals) {
		for (int s = 0; s < nseries; s++)
			sum += totals[s];
		x = H_LEFT;
		for (int s = 0; sum && s < nseries; s++) {
			double w = plot_w * (double)totals[s] / (double)sum;

			svg_rect(f, x, 34, w, 22, COLOR(s), 0.9);
			if (w > 60) {
				snprintf(label, sizeof(label), "%s %.0f%%", names[s],
					 100.0 * (double)totals[s] / (double)sum);
				svg_text(f, x + w / 2, 49, "middle", 11, "%s", label);
			}
			x += w;
		}
		svg_text(f, H_LEFT - 6, 49, "end", 11, "time");
	}
	nb = hi - lo + 1;
	group = plot_w / nb;
	bar = group * 0.8 / nseries;
	svg_line(f, H_LEFT, top + plot_h, H_LEFT + plot_w, top + plot_h, "#000");
	svg_line(f, H_LEFT, top, H_LEFT, top + plot_h, "#000");
	for (uint64_t v = 1; v <= max; v *= 10) {
		double y = top + plot_h - log_height(v, max, plot_h);

		snprintf(label, sizeof(label), "%llu", (unsigned long long)v);
		svg_text(f, H_LEFT - 6, y + 4, "end", 11, "%s", label);
		svg_line(f, H_LEFT, y, H_LEFT + plot_w, y, "#eee");
		if (v > UINT64_MAX / 10)
			break;
	}
	for (int b = lo; b <= hi; b++) {
		double ns = ldexp(1.0, b);

		x = H_LEFT + (b - lo) * group;
		for (int s = 0; s < nseries; s++) {
			double hgt = log_height(hist[s][b], max, plot_h);

			if (hist[s][b])
				svg_rect(f, x + group * 0.1 + s * bar, top + plot_h - hgt, bar, hgt,
					 COLOR(s), 0.9);
		}
		if (ns >= 1e6)
			snprintf(label, sizeof(label), "%.0fms", ns / 1e6);
		else if (ns >= 1e3)
			snprintf(label, sizeof(label), "%.0fus", ns / 1e3);
		else
			snprintf(label, sizeof(label), "%.0fns", ns);
		svg_text(f, x + group / 2, top + plot_h + 16, "middle", 10, "%s", label);
	}
	svg_text(f, H_LEFT + plot_w / 2, top + plot_h + 40, "middle", 12,
		 "latency, log2 buckets (label: bucket start); count on a log scale");
	for (int s = 0; s < nseries; s++) {
		svg_rect(f, H_W - 150, top + 10 + s * 20, 12, 12, COLOR(s), 0.9);
		svg_text(f, H_W - 132, top + 21 + s * 20, "start", 12, "%s", names[s]);
	}
	svg_end(f);
}

/* --- costs --- */

/* One stacked bar per configuration (registration, deregistration,
 * monitor, lookup), with a tick where registering every use would end. */
static void costs(FILE *f, const struct mp_analysis *a)
{
	static const char *const parts[] = { "registration", "deregistration", "monitor",
					     "lookup" };
	double max = 1, plot_w = H_W - 170 - 40, row = 34, top = 70;
	int h = (int)(top + row * (double)a->nconf + 50);
	char label[96];

	for (size_t i = 0; i < a->nconf; i++) {
		double t = mp_sim_total_ns(&a->res[i]);

		max = t > max ? t : max;
		max = a->res[i].nocache_ns > max ? a->res[i].nocache_ns : max;
	}
	svg_begin(f, H_W, h);
	svg_text(f, H_W / 2.0, 22, "middle", 15, "Simulated cache cost per configuration (tick: registering every use)");
	for (int p = 0; p < 4; p++) {
		svg_rect(f, 170 + p * 150, 36, 12, 12, COLOR(p), 0.9);
		svg_text(f, 186 + p * 150, 47, "start", 12, "%s", parts[p]);
	}
	for (size_t i = 0; i < a->nconf; i++) {
		const struct mp_sim_result *r = &a->res[i];
		double v[4] = { r->reg_ns, r->dereg_ns, r->monitor_ns, r->lookup_ns };
		double x = 170, y = top + row * (double)i, nx;

		svg_text(f, 160, y + row / 2 + 4, "end", 12, "%s", a->conf[i].name);
		for (int p = 0; p < 4; p++) {
			double w = plot_w * v[p] / max;

			svg_rect(f, x, y + 4, w, row - 10, COLOR(p), 0.9);
			x += w;
		}
		snprintf(label, sizeof(label), "%.3f ms%s%s", mp_sim_total_ns(r) / 1e6,
			 mp_dereg_dominates(r) ? ", deregistration dominates" : "",
			 r->stale_hits ? ", STALE hits" : "");
		svg_text(f, x + 6, y + row / 2 + 4, "start", 11, "%s", label);
		nx = 170 + plot_w * r->nocache_ns / max;
		svg_line(f, nx, y + 1, nx, y + row - 3, "#000");
	}
	snprintf(label, sizeof(label), "0 .. %.3f ms", max / 1e6);
	svg_text(f, 170, h - 15, "start", 11, "%s", label);
	svg_end(f);
}

static int open_plot(const char *prefix, const char *what, FILE **out)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s-%s.svg", prefix, what);
	*out = fopen(path, "w");
	if (!*out) {
		int err = -errno;

		fprintf(stderr, "mrc-prof: %s: %s\n", path, strerror(-err));
		return err;
	}
	return 0;
}

static int close_plot(FILE *f)
{
	return fclose(f) ? -EIO : 0;
}

int mp_svg_write(const char *prefix, const struct mp_analysis *a)
{
	const char *names[MP_LIB_KINDS > MP_VM_KINDS ? MP_LIB_KINDS : MP_VM_KINDS];
	const uint64_t *hist[MP_LIB_KINDS > MP_VM_KINDS ? MP_LIB_KINDS : MP_VM_KINDS];
	uint64_t totals[MP_LIB_KINDS];
	int n = 0, err;
	FILE *f;

	if ((err = open_plot(prefix, "timeline", &f)))
		return err;
	timeline(f, a);
	if ((err = close_plot(f)) || (err = open_plot(prefix, "latency", &f)))
		return err;
	for (int k = 0; k < MP_VM_KINDS; k++)
		if (a->sum.k[k].calls) {
			names[n] = mp_kind_name((enum mp_kind)k);
			hist[n++] = a->sum.k[k].hist;
		}
	histogram(f, "VM syscall latency (tracing overhead subtracted)", names, hist, NULL, n);
	if ((err = close_plot(f)) || (err = open_plot(prefix, "costs", &f)))
		return err;
	costs(f, a);
	if ((err = close_plot(f)))
		return err;
	n = 0;
	/* Disjoint kinds only, so that the time bar adds up. */
	for (int k = 0; k < MP_LIB_KINDS; k++)
		if (mp_hist_count(a->t->lib.hist[k], MP_LIB_BUCKETS) && mp_libprof_disjoint(k)) {
			names[n] = mp_libprof_kind_name(k);
			totals[n] = a->t->lib.total_ns[k];
			hist[n++] = a->t->lib.hist[k];
		}
	if (!n)
		return 0;
	if ((err = open_plot(prefix, "libmrcache", &f)))
		return err;
	histogram(f, "libmrcache: where the time goes, and time per operation (MRCACHE_PROF)",
		  names, hist, totals, n);
	return close_plot(f);
}
