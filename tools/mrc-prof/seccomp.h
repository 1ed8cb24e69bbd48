/* SPDX-License-Identifier: MIT */
/* seccomp.h - the filter that makes only the syscalls of interest stop. */
#ifndef MP_SECCOMP_H
#define MP_SECCOMP_H

#include <stdint.h>
#include "trace.h"

/* Install in the calling (child) process; buffer_min 0 leaves I/O alone.
 * 0 or -errno. */
int mp_seccomp_install(uint32_t buffer_min);

/* Traced io_uring calls: no event of their own (tracer.c reads the ring). */
#define MP_SECCOMP_URING_SETUP	(MP_KINDS + 1)
#define MP_SECCOMP_URING_ENTER	(MP_KINDS + 2)

/* enum mp_kind of a traced syscall number, an MP_SECCOMP_URING_*, or -1. */
int mp_seccomp_kind(long nr);

#endif
