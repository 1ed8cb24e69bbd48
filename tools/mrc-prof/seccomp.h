/* SPDX-License-Identifier: MIT */
/* seccomp.h - the filter that makes only the syscalls of interest stop. */
#ifndef MP_SECCOMP_H
#define MP_SECCOMP_H

#include <stdint.h>

/* Install in the calling (child) process; buffer_min 0 leaves I/O alone.
 * 0 or -errno. */
int mp_seccomp_install(uint32_t buffer_min);

/* enum mp_kind of a traced syscall number, or -1. */
int mp_seccomp_kind(long nr);

#endif
