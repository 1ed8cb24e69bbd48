/* SPDX-License-Identifier: MIT */
/*
 * owner.h - whose call is it: the program's, or libmrcache's (and libbpf's,
 * which it loads), or libmrcache's profiling (MRCACHE_PROF)?
 *
 * A call belongs to the first frame behind the syscall that is not libc,
 * the loader or the vDSO: munmap <- free <- main is the program's, mmap
 * <- mrc_arena_reserve is the library's (its address-space reservations),
 * mmap <- syscall <- mrc_prof_add is the profiler's.  Shared objects are
 * told by file name (libmrcache*.so, libbpf.so); a statically linked
 * libmrcache by its symbols (mrcache_*, mrc_*, btf_*, libbpf_*,
 * bpf_object*; mrc_prof_* and prof.c's own functions are the profiler).
 * The I/O of the loader alone (no other frame) is a library's too.
 */
#ifndef MP_OWNER_H
#define MP_OWNER_H

#include <stdint.h>
#include "trace.h"

enum mp_owner {
	MP_OWN_PROGRAM,
	MP_OWN_SYSTEM,		/* libc, libpthread, libdl, the vDSO: look further */
	MP_OWN_LOADER,		/* ld.so: look further */
	MP_OWN_LIBRARY,
	MP_OWN_PROFILER,
};

struct mp_owners;

int mp_owners_create(const struct mp_trace *t, struct mp_owners **out);
void mp_owners_destroy(struct mp_owners *o);
/* The owner of one frame: obj a string id of t, vaddr in the object's ELF
 * view (maps.h). */
enum mp_owner mp_owner_of_frame(struct mp_owners *o, uint32_t obj, uint64_t vaddr);

/* Folds frame owners, innermost first, into the call's owner. */
struct mp_owner_fold {
	enum mp_owner owner;	/* MP_OWN_SYSTEM: undecided so far */
	int loader;		/* a loader frame was seen */
};

static inline void mp_owner_fold_init(struct mp_owner_fold *f)
{
	f->owner = MP_OWN_SYSTEM;
	f->loader = 0;
}

/* Returns 1 once decided (further frames change nothing). */
static inline int mp_owner_fold_add(struct mp_owner_fold *f, enum mp_owner frame)
{
	if (f->owner != MP_OWN_SYSTEM)
		return 1;
	if (frame == MP_OWN_LOADER)
		f->loader = 1;
	else if (frame != MP_OWN_SYSTEM)
		f->owner = frame;
	return f->owner != MP_OWN_SYSTEM;
}

/* io: the call is a read or write (the loader's own I/O is a library's). */
static inline enum mp_owner mp_owner_fold_end(const struct mp_owner_fold *f, int io)
{
	if (f->owner != MP_OWN_SYSTEM)
		return f->owner;
	return io && f->loader ? MP_OWN_LIBRARY : MP_OWN_PROGRAM;
}

/* MP_EV_LIBRARY, MP_EV_PROFILER or 0. */
static inline uint16_t mp_owner_flags(enum mp_owner owner)
{
	return owner == MP_OWN_LIBRARY ? MP_EV_LIBRARY :
	       owner == MP_OWN_PROFILER ? MP_EV_PROFILER : 0;
}

#endif
