/* SPDX-License-Identifier: MIT */
/*
 * plots.h - the report's plots as standalone SVG files (tools/common/svg.h): a
 * timeline of the VM calls and invalidations, latency histograms of the
 * VM calls, the simulated cache's costs per configuration, and
 * libmrcache's own histograms.
 */
#ifndef MP_PLOTS_H
#define MP_PLOTS_H

#include "analysis.h"

/* Writes PREFIX-timeline.svg, PREFIX-latency.svg, PREFIX-costs.svg and,
 * when the program used libmrcache, PREFIX-libmrcache.svg.  0 or -errno
 * with a message. */
int mp_svg_write(const char *prefix, const struct mp_analysis *a);

#endif
