/* SPDX-License-Identifier: MIT */
/*
 * summary.h - the VM activity of a trace, added up: per syscall and per
 * call site, counts, bytes and latencies.
 */
#ifndef MP_SUMMARY_H
#define MP_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include "trace.h"

struct mp_kind_sum {
	uint64_t calls, errors, bytes, lat_total_ns;
	uint64_t *lat;		/* sorted latencies of the calls */
	uint64_t hist[MP_HIST_BUCKETS];
};

struct mp_site_sum {
	uint32_t site;
	uint16_t kind;
	uint64_t calls, bytes, lat_total_ns;
	uint64_t invalidated;	/* simulated registrations it invalidated */
};

/* Bytes of a VM event: the length it maps, unmaps, advises, remaps to
 * (mremap) or moves the break by (brk), or the segment size (shm). */
enum mp_not_program { MP_NP_LIBRARY, MP_NP_PROFILER, MP_NP_OWNERS };

struct mp_summary {
	struct mp_kind_sum k[MP_VM_KINDS];	/* the program's own calls */
	/* The VM calls of libmrcache and libbpf (its reservations, its
	 * monitor's maps) and of its profiling: not in k[] nor in sites. */
	struct {
		uint64_t calls, bytes;
	} np[MP_NP_OWNERS][MP_VM_KINDS];
	uint64_t io_calls[2], io_bytes[2];	/* read, write buffers seen; bytes moved */
	uint64_t io_uring, io_fixed;		/* of those, through io_uring; into fixed buffers */
	/* I/O of the loader, libbpf or libmrcache (MP_EV_LIBRARY): not the
	 * application's buffers, left out of the simulated cache. */
	uint64_t lib_io_calls, lib_io_bytes;
	uint64_t vm_ns;			/* latency of the program's VM calls */
	uint64_t loader_vm_ns;		/* of those made by ld.so alone */
	uint32_t processes;		/* the first one and every fork */
	struct mp_site_sum *sites;		/* sorted by calls, descending */
	size_t nsites;
};

int mp_summary_build(const struct mp_trace *t, struct mp_summary *s);
void mp_summary_free(struct mp_summary *s);

#endif
