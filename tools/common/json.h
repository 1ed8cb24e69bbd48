/* SPDX-License-Identifier: MIT */
/* json.h - what the tools that write JSON share. */
#ifndef MRC_TOOLS_JSON_H
#define MRC_TOOLS_JSON_H

#include <stdio.h>

/* s as a JSON string literal: quotes, backslashes and control characters
 * escaped. */
void json_string(FILE *f, const char *s);

#endif
