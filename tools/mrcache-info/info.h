/* SPDX-License-Identifier: MIT */
/* info.h - mrcache-info's sections, each printed by its own file. */
#ifndef MRC_INFO_H
#define MRC_INFO_H

#include <stdio.h>
#include "mrcache.h"

/* probe.c: the library's messages up to `level` (MRCACHE_LOG_*) while
 * `fn(arg)` runs, joined by "; " into buf (empty when it said nothing);
 * returns fn's result. */
int info_capture(int (*fn)(void *), void *arg, int level, char *buf, size_t len);
/* probe.c: create and destroy a cache with `cfg` (a callbacks backend that
 * pins nothing is filled in); 0 or the -errno of the create.  With
 * `config` non-NULL, the configuration in effect is copied there. */
int info_try_cache(struct mrcache_config *cfg, struct mrcache_config *config);
/* probe.c: each monitor, whether it starts here and why not. */
void info_monitors(FILE *out);

/* settings.c: the configuration in effect after the environment; 0, or 1
 * when a program using it could not create a cache here. */
int info_config(FILE *out);
/* settings.c: every MRCACHE_* variable, its default and value, and those
 * set that the library does not read. */
void info_environment(FILE *out);

/* module.c: the mrmon module's ABI version, features and limits. */
void info_module(FILE *out);

#endif
