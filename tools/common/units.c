/* SPDX-License-Identifier: MIT */
/* units.c - durations and plain numbers for tables and plots. */
#include <stdio.h>
#include "units.h"

/* Digits after the point that keep three significant ones. */
static int decimals(double v)
{
	double a = v < 0 ? -v : v;

	return a >= 100 ? 0 : a >= 10 ? 1 : 2;
}

const char *units_ns(double ns, const char *sep, char *buf, size_t len)
{
	static const struct { double scale; const char *unit; } u[] = {
		{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "\xc2\xb5s" }, { 1, "ns" },
	};
	double a = ns < 0 ? -ns : ns;
	size_t i = 0;

	while (i + 1 < sizeof(u) / sizeof(u[0]) && a < u[i].scale)
		i++;
	snprintf(buf, len, "%.*f%s%s", decimals(ns / u[i].scale), ns / u[i].scale,
		 sep, u[i].unit);
	return buf;
}

const char *units_plain(double v, char *buf, size_t len)
{
	double a = v < 0 ? -v : v;

	if (a >= 100 || v == (double)(long long)v)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.*f", a >= 10 ? 1 : a >= 1 ? 2 : 3, v);
	return buf;
}

int units_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}
