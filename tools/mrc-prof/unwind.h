/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - exact call stacks of a stopped traced thread from DWARF CFI
 * (.eh_frame / .debug_frame) with elfutils' libdwfl: `--unwind dwarf`.
 *
 * Slower than the stack scan (libdwfl reads registers with ptrace and
 * memory word by word) but every frame is real, so the application
 * function behind glibc's malloc -> sysmalloc -> mmap shows.  One Dwfl per
 * traced process, rebuilt when a frame falls outside its modules (a
 * library loaded since) and dropped at exec and exit.
 */
#ifndef MP_UNWIND_H
#define MP_UNWIND_H

#include <stdint.h>
#include <sys/types.h>

struct mp_unwinder;

int mp_unwinder_create(struct mp_unwinder **out);
void mp_unwinder_destroy(struct mp_unwinder *u);
void mp_unwinder_forget(struct mp_unwinder *u, pid_t tgid);
/* Up to max return addresses of tid's callers, innermost first (its own
 * pc, ip, is not included).  Returns the count, 0 on failure. */
int mp_unwind(struct mp_unwinder *u, pid_t tgid, pid_t tid, uint64_t ip, uint64_t *ret,
	      int max);

#endif
