/* SPDX-License-Identifier: MIT */
/* vmranges.c - the ranges each VM call invalidates (table in vmranges.h). */
#include <string.h>
#include <sys/mman.h>
#include "vmranges.h"

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif

const char *mp_inv_cause_name(enum mp_inv_cause c)
{
	static const char *const n[MP_INV_CAUSES] = { "unmap", "remap", "discard" };

	return c < MP_INV_CAUSES ? n[c] : "invalid";
}

int mp_vm_unmapping_call(const struct mp_event *e)
{
	return e->kind == MP_MUNMAP || e->kind == MP_MREMAP || e->kind == MP_MADVISE ||
	       e->kind == MP_BRK || e->kind == MP_SHMDT ||
	       (e->kind == MP_MMAP && (e->a[2] & MAP_FIXED));
}

int mp_vm_ranges(struct mp_vm_state *st, const struct mp_event *e, struct mp_range out[2],
		 enum mp_inv_cause *cause)
{
	uint64_t ret = (uint64_t)e->ret;

	*cause = MP_INV_UNMAP;
	if (e->flags & MP_EV_ERROR)
		return 0;
	switch (e->kind) {
	case MP_MMAP:
		if (!(e->a[2] & MAP_FIXED) || (e->a[2] & MAP_FIXED_NOREPLACE))
			return 0;
		out[0] = (struct mp_range){ ret, e->a[1] };
		return 1;
	case MP_MUNMAP:
		out[0] = (struct mp_range){ e->a[0], e->a[1] };
		return 1;
	case MP_MREMAP:
		*cause = MP_INV_REMAP;
		if (ret != e->a[0]) {
			out[0] = (struct mp_range){ e->a[0], e->a[1] };
			out[1] = (struct mp_range){ ret, e->a[2] };
			return 2;
		}
		if (e->a[2] >= e->a[1])
			return 0;
		out[0] = (struct mp_range){ e->a[0] + e->a[2], e->a[1] - e->a[2] };
		return 1;
	case MP_MADVISE:
		*cause = MP_INV_DISCARD;
		if (e->a[2] != MADV_DONTNEED && e->a[2] != MADV_FREE &&
		    e->a[2] != MADV_REMOVE && e->a[2] != MADV_DONTNEED_LOCKED)
			return 0;
		out[0] = (struct mp_range){ e->a[0], e->a[1] };
		return 1;
	case MP_BRK: {
		uint64_t old = st->brk;

		st->brk = ret;
		if (!old || ret >= old)
			return 0;
		out[0] = (struct mp_range){ ret, old - ret };
		return 1;
	}
	case MP_SHMAT:
		for (int i = 0; i < MP_SHM_SLOTS; i++)
			if (!st->shm_addr[i]) {
				st->shm_addr[i] = ret;
				st->shm_len[i] = e->a[3];
				break;
			}
		return 0;
	case MP_SHMDT:
		for (int i = 0; i < MP_SHM_SLOTS; i++)
			if (st->shm_addr[i] == e->a[0]) {
				st->shm_addr[i] = 0;
				out[0] = (struct mp_range){ e->a[0], st->shm_len[i] };
				return 1;
			}
		return 0;
	case MP_EXEC:
	case MP_EXIT:
		memset(st, 0, sizeof(*st));
		return 0;
	default:
		return 0;
	}
}
