/* SPDX-License-Identifier: MIT */
/*
 * libprof.h - read the histograms libmrcache writes when MRCACHE_PROF is
 * set (lib/common/prof.h): one "<prefix>.<pid>.json" per process that used it.
 */
#ifndef MP_LIBPROF_H
#define MP_LIBPROF_H

#include "trace.h"

/* A fresh private prefix for this run's dumps (in $TMPDIR): 0 or -errno. */
int mp_libprof_prefix(char *buf, size_t len);
/* Merge every dump of prefix into t->lib and delete the dumps and their
 * directory.  Returns the number of dumps read. */
int mp_libprof_collect(const char *prefix, struct mp_trace *t);
/* Parse one dump into lib (added).  0 or -EINVAL. */
int mp_libprof_parse(const char *text, struct mp_libprof *lib);

const char *mp_libprof_kind_name(int kind);
/* Kinds that do not contain one another (lookup, register, deregister,
 * monitor, miss_own, invalidation_own): their times add up to the time
 * spent in the cache.  "miss" and "invalidation" contain inner work. */
int mp_libprof_disjoint(int kind);

#endif
