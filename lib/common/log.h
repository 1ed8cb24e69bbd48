/* SPDX-License-Identifier: MIT */
/* log.h - what lib/common/log.c offers the library besides mrc_log() (monitor.h). */
#ifndef MRC_LOG_H
#define MRC_LOG_H

/* While on, this thread's errors (level 0) are logged as debug messages
 * (level 1): `auto` trying monitors that may not start here (monitor.c). */
void mrc_log_quiet(int on);

#endif
