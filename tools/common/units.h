/* SPDX-License-Identifier: MIT */
/*
 * units.h - numbers as a reader wants them: a duration in the unit that
 * fits (ns, µs, ms, s) with three significant digits, never an exponent.
 */
#ifndef MRC_TOOLS_UNITS_H
#define MRC_TOOLS_UNITS_H

#include <stddef.h>

/* "21.2 ns", "150.6 µs", "-3.40 ms"; sep goes between number and unit
 * ("" keeps them one word, for tables read by awk).  Returns buf. */
const char *units_ns(double ns, const char *sep, char *buf, size_t len);
/* A plain number without exponent: 3 significant digits below 100,
 * whole numbers above. */
const char *units_plain(double v, char *buf, size_t len);
/* Display width of a UTF-8 string (µ is one column, two bytes). */
int units_width(const char *s);

#endif
