/* SPDX-License-Identifier: MIT */
/*
 * env.h - the MRCACHE_* variables (lib/common/env.c): how their values read, and
 * which ones exist.
 */
#ifndef MRC_ENV_H
#define MRC_ENV_H

#include <stddef.h>

/* Parse a value; 0 or -EINVAL, *out untouched on error.  Silent, so that
 * lib/common/log.c can use them. */
int mrc_parse_bool(const char *s, int *out);
int mrc_parse_size(const char *s, size_t *out);
/* 0/error, 1/debug, 2/trace (MRCACHE_LOG_*), in any case. */
int mrc_parse_log_level(const char *s, int *out);

/* The variable's value into *out: 0 when it is unset (*out untouched) or
 * valid, -EINVAL after a message naming it. */
int mrc_env_bool(const char *name, int *out);
int mrc_env_size(const char *name, size_t *out);

/* Log the MRCACHE_* variables set (level 1), and warn once per process
 * about those the library does not know. */
void mrc_env_report(void);

#endif
