/* SPDX-License-Identifier: MIT */
/* log.h - what lib/common/log.c offers the library besides mrc_log() (monitor.h). */
#ifndef MRC_LOG_H
#define MRC_LOG_H

/* While on, this thread's errors (level 0) are logged as debug messages
 * (level 1): `auto` trying monitors that may not start here (monitor.c). */
void mrc_log_quiet(int on);

/* The name of the cache this thread works for (NULL: none): messages get
 * it as a prefix, "mrcache: NAME: ...".  Returns the previous one, for the
 * caller to restore (a callback of one cache may use another). */
const char *mrc_log_name(const char *name);

#endif
