/* SPDX-License-Identifier: MIT */
/*
 * callsite.h - name the call site of a stopped thread's syscall.
 *
 * Frame 0 is the syscall instruction (inside the libc wrapper, e.g.
 * munmap or the mmap glibc's malloc calls).  The callers come from a scan
 * of the thread's stack: a word is taken as a return address when it
 * points into an executable mapping just after a call instruction.  The
 * first one is the caller of the wrapper (exact for glibc's leaf wrappers,
 * which push nothing); further ones may include stale words left on the
 * stack.  After that first caller, frames in libc, the loader and
 * libmrcache are skipped (mp_object_is_system), so that the frames kept
 * reach the application's code through malloc, stdio or dlopen.  With
 * MP_UNWIND_DWARF the callers come from CFI unwinding instead (unwind.h):
 * exact, slower.
 */
#ifndef MP_CALLSITE_H
#define MP_CALLSITE_H

#include <stdint.h>
#include <sys/types.h>
#include "maps.h"
#include "owner.h"
#include "trace.h"

struct mp_callsites;

enum mp_unwind_mode { MP_UNWIND_SCAN, MP_UNWIND_DWARF };

int mp_callsites_create(struct mp_trace *t, struct mp_maps *maps, int depth,
			enum mp_unwind_mode mode, struct mp_callsites **out);
void mp_callsites_destroy(struct mp_callsites *cs);
/* Returns the site id (0 when even the syscall address is unknown) and
 * in *owner whose call it is (owner.h; io: a read or write).  The scan's
 * verdict is checked by DWARF unwinding when it is not the program's, so
 * a stale return address into the library on the stack cannot make the
 * program's call the library's. */
uint32_t mp_callsite_get(struct mp_callsites *cs, pid_t tid, pid_t tgid,
			 uint64_t ip, uint64_t sp, int io, enum mp_owner *owner);
/* libc, the loader, libpthread, libdl or libmrcache, by file name. */
int mp_object_is_system(const char *path);
/* exec: return-address verdicts for tgid's old image are void. */
void mp_callsites_forget(struct mp_callsites *cs, pid_t tgid);

#endif
