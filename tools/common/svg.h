/* SPDX-License-Identifier: MIT */
/*
 * svg.h - the SVG writer every tool's plots use (mrc-bench, mrc-prof):
 * standalone files drawn by hand, no library.  Text is escaped here, so
 * callers pass plain strings.
 */
#ifndef MRC_TOOLS_SVG_H
#define MRC_TOOLS_SVG_H

#include <stdio.h>

/* The document with a white background, and its end. */
void svg_begin(FILE *f, int width, int height);
void svg_end(FILE *f);
/* anchor: "start", "middle" or "end". */
void svg_text(FILE *f, double x, double y, const char *anchor, int size,
	      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
void svg_rect(FILE *f, double x, double y, double w, double h,
	      const char *fill, double opacity);
void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *stroke);
/* A grey bar hatched with diagonal lines: a value that must not be read
 * as a result (a configuration that served stale data). */
void svg_rect_hatched(FILE *f, double x, double y, double w, double h);

#endif
