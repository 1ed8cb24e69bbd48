/* SPDX-License-Identifier: MIT */
/*
 * trace.h - what mrc-prof records: VM events, call sites, and the trace
 * file that lets a run be replayed later (format in docs/mrc-prof.md).
 *
 * Every analysis (report, simulated cache, plots) reads a struct mp_trace,
 * whether it was just traced or loaded from a file, so a replay reports
 * exactly what the live run did.
 */
#ifndef MP_TRACE_H
#define MP_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include "hist.h"

enum mp_kind {
	MP_MMAP,	/* a0 addr, a1 len, a2 prot << 32 | flags, a3 fd */
	MP_MUNMAP,	/* a0 addr, a1 len */
	MP_MREMAP,	/* a0 old, a1 old_len, a2 new_len, a3 flags */
	MP_MADVISE,	/* a0 addr, a1 len, a2 advice */
	MP_BRK,		/* a0 requested break; ret the new break */
	MP_SHMAT,	/* a0 shmid, a1 addr, a2 flags, a3 segment size */
	MP_SHMDT,	/* a0 addr */
	MP_VM_KINDS,
	MP_IO_READ = MP_VM_KINDS, /* a0 fd, a1 buf, a2 len, a3 syscall nr (io_uring:
				   * io_uring_enter's, opcode << 32); ret bytes moved */
	MP_IO_WRITE,
	MP_FORK,	/* tgid is the parent, a0 the child's tgid */
	MP_EXEC,	/* a0 string id of the new executable */
	MP_EXIT,	/* a0 exit status (wait status) */
	MP_KINDS
};

/* One observation.  Fixed layout: it is also the on-disk record. */
struct mp_event {
	uint64_t t_ns;		/* syscall entry, since the trace started */
	uint64_t lat_ns;	/* entry to exit minus tracing overhead */
	uint64_t a[4];		/* arguments, by kind (above) */
	int64_t ret;		/* return value or -errno */
	uint32_t tid;
	uint32_t tgid;		/* the address space */
	uint32_t site;		/* index into mp_trace.sites; 0: unknown */
	uint16_t kind;		/* enum mp_kind */
	uint16_t flags;		/* MP_EV_* */
};

#define MP_EV_ERROR	1u	/* ret is -errno */
#define MP_EV_LIBRARY	2u	/* I/O of the loader, libbpf or libmrcache; a VM call
				 * of libbpf or libmrcache */
#define MP_EV_PROFILER	4u	/* a VM call of libmrcache's profiling (MRCACHE_PROF) */
#define MP_EV_URING	8u	/* I/O submitted to io_uring (ret: the length asked) */
#define MP_EV_FIXED	16u	/* io_uring I/O into a registered (fixed) buffer */

/* Not the program's own: a library's or the profiler's. */
#define MP_EV_NOT_PROGRAM (MP_EV_LIBRARY | MP_EV_PROFILER)

/* An I/O buffer of the application's own: what the simulated cache sees.
 * The loader's, libbpf's (kernel BTF for the bpf monitor) and
 * libmrcache's own I/O is counted apart unless include_library. */
static inline int mp_event_is_buffer(const struct mp_event *e, int include_library)
{
	return (e->kind == MP_IO_READ || e->kind == MP_IO_WRITE) &&
	       (include_library || !(e->flags & MP_EV_NOT_PROGRAM));
}

#define MP_MAX_FRAMES	8

/* A call site: the syscall instruction, then its callers. */
struct mp_frame {
	uint32_t obj;		/* string id of the object path */
	uint32_t sym;		/* string id of the symbol; 0: none */
	uint64_t vaddr;		/* address in the object's ELF view */
	uint64_t sym_off;	/* vaddr - symbol start */
};

struct mp_site {
	uint32_t nframes;
	struct mp_frame frames[MP_MAX_FRAMES];
};

/* libmrcache's own histograms, merged over every dump (lib/common/prof.h). */
#define MP_LIB_KINDS	8
#define MP_LIB_BUCKETS	40
struct mp_libprof {
	uint32_t dumps;		/* processes that wrote a dump */
	uint64_t total_ns[MP_LIB_KINDS];
	uint64_t hist[MP_LIB_KINDS][MP_LIB_BUCKETS];
};

struct mp_trace {
	struct mp_event *ev;
	size_t nev, cap_ev;
	struct mp_site *sites;	/* sites[0] is "unknown" */
	size_t nsites, cap_sites;
	char **strs;		/* strs[0] is "" */
	size_t nstrs, cap_strs;
	char *command;		/* the traced command line */
	uint64_t duration_ns;	/* first exec to last exit */
	uint64_t overhead_ns;	/* per traced syscall, subtracted from lat_ns */
	uint64_t program_cpu_ns;	/* user + system time of the traced processes */
	uint64_t tracer_cpu_ns;	/* user + system time of the tracer loop */
	uint32_t buffer_min;	/* I/O buffers traced from this size; 0: none */
	uint32_t unwind;	/* callers by 0: stack scan, 1: DWARF unwinding */
	int exit_status;	/* wait status of the first process */
	struct mp_libprof lib;
};

void mp_trace_init(struct mp_trace *t);
void mp_trace_free(struct mp_trace *t);
/* Each returns 0 or -ENOMEM. */
int mp_trace_add_event(struct mp_trace *t, const struct mp_event *ev);
int mp_trace_add_site(struct mp_trace *t, const struct mp_site *s, uint32_t *id);
/* Interned: the same string always gets the same id.  Returns the id
 * (> 0 for a non-empty string) or -ENOMEM. */
long mp_trace_intern(struct mp_trace *t, const char *s);
const char *mp_trace_str(const struct mp_trace *t, uint32_t id);

/* Save/load the trace file.  0 or -errno; load reports a bad file with a
 * message on stderr and -EINVAL. */
int mp_trace_save(const struct mp_trace *t, const char *path);
int mp_trace_load(struct mp_trace *t, const char *path);

const char *mp_kind_name(enum mp_kind kind);

#endif
