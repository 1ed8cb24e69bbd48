/* SPDX-License-Identifier: MIT */
/*
 * sim.h - a simulated registration cache driven by a trace, with a cost
 * model: what a cache over the program's buffers would cost and save.
 *
 * Buffers are the buffers of the program's traced I/O calls (read, write,
 * pread64, pwrite64, recvfrom, sendto of at least the trace's buffer_min
 * bytes): the memory an RDMA or io_uring library would register to move
 * that data.  Each use looks the page-aligned range up; a miss registers
 * it (merged with overlapping regions, as lib/cache does).  VM calls that
 * change what a range maps (munmap, mmap MAP_FIXED over it, mremap of it,
 * madvise DONTNEED/FREE/REMOVE, brk shrink, shmdt) invalidate the regions
 * they overlap; exec and exit tear a space's regions down.
 *
 * Two engines run a configuration: "sim" (this file's simulation, the
 * default) and "libmrcache" (libreplay.c: the real cache, monitor none,
 * told of each invalidating call by mrcache_invalidate(), with a callbacks
 * backend that charges the model).  Neither registers anything: costs come
 * from the model below.
 */
#ifndef MP_SIM_H
#define MP_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "trace.h"
#include "vmranges.h"

enum mp_sim_monitor { MP_MON_KERNEL, MP_MON_BPF, MP_MON_UFFD, MP_MON_HOOKS, MP_MON_NONE,
		      MP_MON_COUNT };

enum mp_engine { MP_ENGINE_SIM, MP_ENGINE_LIB };

struct mp_sim_config {
	char name[64];
	enum mp_engine engine;
	uint64_t max_regions, max_bytes;	/* 0: unlimited */
	enum mp_sim_monitor monitor;
	char backend[16];			/* preset the costs came from */
	/* cost model, ns */
	double reg_ns, reg_ns_per_byte;		/* per registration */
	double dereg_ns, dereg_ns_per_byte;	/* per deregistration */
	double lookup_ns;			/* per buffer use (hit or miss) */
	double watch_ns, unwatch_ns;		/* monitor, per region */
	double vmcall_ns;			/* monitor, per unmapping VM call */
	double inval_ns;			/* monitor, per invalidated region */
	/* What not registering costs: copying through a pre-registered
	 * bounce buffer, per byte (the verdict's break-even block size). */
	double copy_ns_per_byte;
};

struct mp_sim_result {
	uint64_t uses, hits, misses, stale_hits, uncached;	/* stale: sim only */
	uint64_t registrations, deregistrations;
	uint64_t dereg_invalidated, dereg_evicted, dereg_merged, dereg_teardown;
	uint64_t invalidated[MP_INV_CAUSES];
	uint64_t ops_invalidating;		/* VM calls that invalidated >= 1 */
	uint64_t max_per_op;
	uint64_t per_op_hist[16];		/* bucket b: [2^b, 2^(b+1)) regions */
	uint64_t peak_regions, peak_bytes;
	double reg_ns, dereg_ns, lookup_ns, monitor_ns;
	double nocache_ns;			/* register + deregister every use */
};

/* Defaults: unlimited, kernel monitor, verbs costs. */
void mp_sim_config_default(struct mp_sim_config *c);
/* "name:key=value,..." (keys in docs/mrc-prof.md).  0 or -EINVAL with a
 * message. */
int mp_sim_config_parse(const char *spec, struct mp_sim_config *c);

/* Runs the trace through the configuration's engine.  per_event, if not
 * NULL, gets the number of regions each event invalidated (t->nev
 * entries).  0 or -errno. */
int mp_cache_run(const struct mp_trace *t, const struct mp_sim_config *c,
		 struct mp_sim_result *r, uint32_t *per_event);
int mp_sim_run(const struct mp_trace *t, const struct mp_sim_config *c,
	       struct mp_sim_result *r, uint32_t *per_event);

int mp_libreplay_run(const struct mp_trace *t, const struct mp_sim_config *c,
		     struct mp_sim_result *r, uint32_t *per_event);
/* The model's costs of one registration / deregistration of len bytes. */
double mp_sim_reg_ns(const struct mp_sim_config *c, uint64_t len);
double mp_sim_dereg_ns(const struct mp_sim_config *c, uint64_t len);
/* Counts one VM call that invalidated n regions (n > 0). */
void mp_sim_count_op(struct mp_sim_result *r, uint32_t n);
/* Deregistration costs more than registration and than the monitor. */
int mp_dereg_dominates(const struct mp_sim_result *r);
/* By how much the deregistration model would have to grow for that. */
double mp_dereg_dominance_factor(const struct mp_sim_result *r);
double mp_sim_total_ns(const struct mp_sim_result *r);
const char *mp_sim_monitor_name(enum mp_sim_monitor m);
const char *mp_engine_name(enum mp_engine e);

#endif
