/* SPDX-License-Identifier: MIT */
/*
 * arena.h - a range of address space reserved once and made usable from
 * its start as it is needed.
 *
 * Why not malloc: what the cache grows (its region slabs, the LRU heap)
 * then never moves, so lock-free readers may keep pointers into it and
 * "is this pointer inside?" is two compares; a growth leaves no freed
 * copy behind in the brk heap; and the pages it uses are exactly the
 * resident ones (an untouched committed page costs nothing), so the
 * process's RSS shows the cache's memory honestly.
 *
 * The reservation is PROT_NONE and MAP_NORESERVE: it costs address space
 * only, even under strict overcommit.  mprotect() makes the next part
 * usable; the usable prefix is one mapping that only grows, and it is
 * never hooked (hooks/intercept.c interposes no mprotect).
 */
#ifndef MRC_ARENA_H
#define MRC_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct mrc_arena {
	char *base;		/* atomic; NULL until mrc_arena_reserve() */
	size_t reserved;	/* bytes of address space from base */
	size_t used;		/* atomic: bytes usable from base */
	void *map;		/* what mmap() returned (base is aligned in it) */
	size_t map_len;
};

/* Reserve up to `bytes` starting at an `align`-aligned base (a power of
 * two).  Under an address-space limit (RLIMIT_AS)
 * a reservation that big may fail: then half of it, and so on down to
 * `min_bytes`.  a->reserved says what was had.  0 or -ENOMEM. */
int mrc_arena_reserve(struct mrc_arena *a, size_t bytes, size_t min_bytes, size_t align);
/* Make [base, base + bytes) usable (bytes rounded up to the page).  0, or
 * -ENOMEM when that is beyond the reservation or the kernel refuses. */
int mrc_arena_grow(struct mrc_arena *a, size_t bytes);
/* Unmap all of it; the arena is empty again. */
void mrc_arena_release(struct mrc_arena *a);

/* Lock-free: does p point into the usable part?  Never dereferences p.
 * used is loaded first: it is published after base (release), so a
 * nonzero used comes with its base. */
static inline int mrc_arena_holds(const struct mrc_arena *a, const void *p)
{
	size_t used = __atomic_load_n(&a->used, __ATOMIC_ACQUIRE);
	uintptr_t base = (uintptr_t)__atomic_load_n(&a->base, __ATOMIC_RELAXED);

	return (uintptr_t)p - base < used;
}

#endif
