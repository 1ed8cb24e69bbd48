/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - name the frames of every call site: function + offset, via
 * elfutils' libdwfl over each object file (its .symtab, or the separate
 * debug file found by build-id or debuglink, e.g. libc6-dbg, else .dynsym).
 */
#ifndef MP_SYMBOLS_H
#define MP_SYMBOLS_H

#include "trace.h"

/* Fills frames[].sym and sym_off of every site.  0 or -ENOMEM. */
int mp_symbolize(struct mp_trace *t);

/* include (--library-io): the I/O calls the tracer found to be the
 * loader's, libbpf's or libmrcache's (owner.h) become the program's.
 * Returns how many I/O calls are still not the program's. */
size_t mp_mark_library_io(struct mp_trace *t, int include);

/* "func+0x1a (libc.so.6)" or "libc.so.6+0x9a1b2" into buf. */
void mp_frame_format(const struct mp_trace *t, const struct mp_frame *f, char *buf, size_t len);

#endif
