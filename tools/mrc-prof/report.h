/* SPDX-License-Identifier: MIT */
/* report.h - the text summary, the JSON report, and plain counts. */
#ifndef MP_REPORT_H
#define MP_REPORT_H

#include <stdio.h>
#include "analysis.h"

void mp_report_text(FILE *f, const struct mp_analysis *a, int top);
void mp_report_json(FILE *f, const struct mp_analysis *a, int top);
/* "<syscall> <calls>" lines, for comparing with strace -c. */
void mp_report_counts(FILE *f, const struct mp_analysis *a);

#endif
