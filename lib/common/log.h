/* SPDX-License-Identifier: MIT */
/* log.h - what lib/common/log.c offers the library besides mrc_log() (monitor.h). */
#ifndef MRC_LOG_H
#define MRC_LOG_H

#include <stddef.h>

/* While on, this thread's errors (level 0) are logged as debug messages
 * (level 1): `auto` trying monitors that may not start here (monitor.c). */
void mrc_log_quiet(int on);

/* While buf is non-NULL, the first message this thread logs at debug
 * level or below (whether or not it is delivered) is also written there,
 * without prefix: the reason a monitor gave for not starting, for
 * `auto`'s one-line summary (monitor.c).  NULL stops it. */
void mrc_log_keep(char *buf, size_t len);

/* The name of the cache this thread works for (NULL: none): messages get
 * it as a prefix, "mrcache: NAME: ...".  Returns the previous one, for the
 * caller to restore (a callback of one cache may use another). */
const char *mrc_log_name(const char *name);

#endif
