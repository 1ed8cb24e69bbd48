/* SPDX-License-Identifier: MIT */
/*
 * svg.h - plots as standalone SVG files, drawn by hand (no library): a
 * timeline of the VM calls and invalidations, latency histograms of the
 * VM calls, the simulated cache's costs per configuration, and
 * libmrcache's own histograms.
 */
#ifndef MP_SVG_H
#define MP_SVG_H

#include "analysis.h"

/* Writes PREFIX-timeline.svg, PREFIX-latency.svg, PREFIX-costs.svg and,
 * when the program used libmrcache, PREFIX-libmrcache.svg.  0 or -errno
 * with a message. */
int mp_svg_write(const char *prefix, const struct mp_analysis *a);

#endif
