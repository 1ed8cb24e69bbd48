/* SPDX-License-Identifier: MIT */
/*
 * tracer.h - run a program under ptrace and record its VM syscalls.
 *
 * The child installs a seccomp filter that returns SECCOMP_RET_TRACE for
 * mmap, munmap, mremap, madvise, brk, shmat and shmdt (and, when buffers
 * are traced, read/write/pread64/pwrite64/recvfrom/sendto of at least
 * buffer_min bytes) and SECCOMP_RET_ALLOW for everything else, so other
 * syscalls never stop.  A traced VM call stops twice: at the seccomp stop
 * (arguments, call site) and at syscall exit (result, latency); a traced
 * I/O call stops once.  Threads and children are followed through
 * PTRACE_O_TRACECLONE/FORK/VFORK/EXEC; they inherit the filter.
 */
#ifndef MP_TRACER_H
#define MP_TRACER_H

#include <stdint.h>
#include "trace.h"

struct mp_tracer_opts {
	char **argv;			/* the command */
	int (*child_fn)(void *arg);	/* instead of argv: run this (calibration) */
	void *child_arg;
	uint32_t buffer_min;		/* trace I/O buffers from this size; 0: off */
	int depth;			/* call-site frames */
	int unwind;			/* enum mp_unwind_mode */
	int only_first;			/* record the first process only */
	int no_aslr;			/* ADDR_NO_RANDOMIZE: reproducible counts */
	const char *libprof_prefix;	/* MRCACHE_PROF for the child, or NULL */
	uint64_t overhead_ns;		/* subtracted from every latency */
};

/* Runs the command to completion; fills t.  0 or -errno (with a message). */
int mp_tracer_run(const struct mp_tracer_opts *o, struct mp_trace *t);

/* The least tracing overhead of one traced syscall (5th percentile), in
 * ns, measured by tracing a child that issues null syscalls; 0 if it
 * cannot be measured. */
uint64_t mp_tracer_calibrate(void);

#endif
