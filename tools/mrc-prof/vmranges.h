/* SPDX-License-Identifier: MIT */
/*
 * vmranges.h - which address ranges a VM call changed, i.e. which
 * registrations over them it invalidates.  Shared by the simulated cache
 * and the libmrcache replay so that both see the same invalidations.
 *
 *   munmap                     [addr, addr+len)                 unmap
 *   mmap MAP_FIXED             [ret, ret+len) (not _NOREPLACE)  unmap
 *   mremap, moved              old range and target range       remap
 *   mremap, shrunk in place    the tail                         remap
 *   madvise DONTNEED, FREE,    [addr, addr+len)                 discard
 *     REMOVE, DONTNEED_LOCKED
 *   brk lowering the break     [new, old)                       unmap
 *   shmdt                      the segment (size seen at shmat) unmap
 */
#ifndef MP_VMRANGES_H
#define MP_VMRANGES_H

#include <stddef.h>
#include <stdint.h>
#include "trace.h"

enum mp_inv_cause { MP_INV_UNMAP, MP_INV_REMAP, MP_INV_DISCARD, MP_INV_CAUSES };

struct mp_range {
	uint64_t start, len;
};

#define MP_SHM_SLOTS 16

/* What the ranges of a later call depend on, per address space. */
struct mp_vm_state {
	uint64_t brk;
	uint64_t shm_addr[MP_SHM_SLOTS], shm_len[MP_SHM_SLOTS];
};

/* Fills out[0..n) and *cause; returns n (0, 1 or 2).  Updates st. */
int mp_vm_ranges(struct mp_vm_state *st, const struct mp_event *e, struct mp_range out[2],
		 enum mp_inv_cause *cause);
/* A call that can unmap: the monitor's per-call cost applies (a hook or a
 * notifier runs whether or not the call hits a watched range). */
int mp_vm_unmapping_call(const struct mp_event *e);
const char *mp_inv_cause_name(enum mp_inv_cause c);

#endif
