/* SPDX-License-Identifier: MIT */
/*
 * maps.h - the traced processes' address spaces as /proc/PID/maps shows
 * them: which object an address lies in, and where in that object's ELF
 * view (so the same call site in two processes is one site).
 *
 * A space is keyed by tgid and read lazily; a lookup that misses re-reads
 * it (a library was loaded since), exec forgets it.  Code mappings rarely
 * move, so the snapshot stays right between re-reads; an address in a
 * library unloaded and replaced at the same place would be misnamed.
 */
#ifndef MP_MAPS_H
#define MP_MAPS_H

#include <stdint.h>
#include <sys/types.h>
#include "trace.h"

struct mp_maps;

int mp_maps_create(struct mp_trace *t, struct mp_maps **out);
void mp_maps_destroy(struct mp_maps *m);
/* exec or exit: the space of tgid is gone. */
void mp_maps_forget(struct mp_maps *m, pid_t tgid);

/* Which object holds addr, and its ELF virtual address there.  Returns 1
 * when addr is in an executable mapping, 0 when in another mapping, -1
 * when unmapped (after one re-read). */
int mp_maps_lookup(struct mp_maps *m, pid_t tgid, uint64_t addr,
		   uint32_t *obj, uint64_t *vaddr);
/* Like lookup, without re-reading: for probing candidate addresses. */
int mp_maps_is_code(struct mp_maps *m, pid_t tgid, uint64_t addr);
/* Length of the mapping that starts at addr (a shmat segment); 0 if none. */
uint64_t mp_maps_mapping_len(pid_t tgid, uint64_t addr);

#endif
