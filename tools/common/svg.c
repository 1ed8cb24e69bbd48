/* SPDX-License-Identifier: MIT */
/* svg.c - a minimal SVG writer shared by the tools' plots. */
#include <stdarg.h>
#include "svg.h"

void svg_begin(FILE *f, int width, int height)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
		"<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" "
		"patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		"<rect width=\"6\" height=\"6\" fill=\"#d9d9d9\"/>"
		"<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#555\" "
		"stroke-width=\"2\"/></pattern></defs>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		width, height, width, height);
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

void svg_text(FILE *f, double x, double y, const char *anchor, int size,
	      const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%d\">",
		x, y, anchor, size);
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

void svg_rect(FILE *f, double x, double y, double w, double h,
	      const char *fill, double opacity)
{
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.2f\" "
		"fill=\"%s\" fill-opacity=\"%.2f\"/>\n", x, y, w, h, fill, opacity);
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2,
	      const char *stroke)
{
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"%s\"/>\n", x1, y1, x2, y2, stroke);
}

void svg_rect_hatched(FILE *f, double x, double y, double w, double h)
{
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.2f\" "
		"fill=\"url(#hatch)\" stroke=\"#555\"/>\n", x, y, w, h);
}
