/* SPDX-License-Identifier: MIT */
/* arena.c - see arena.h. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cache/arena.h"

int mrc_arena_reserve(struct mrc_arena *a, size_t bytes, size_t min_bytes, size_t align)
{
	void *map;

	for (;;) {
		map = mmap(NULL, bytes + align, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map != MAP_FAILED)
			break;
		if (bytes / 2 < min_bytes)
			return -ENOMEM;
		bytes /= 2;
	}
	a->map = map;
	a->map_len = bytes + align;
	a->reserved = bytes;
	a->used = 0;
	__atomic_store_n(&a->base, (char *)(((uintptr_t)map + align - 1) & ~(uintptr_t)(align - 1)),
			 __ATOMIC_RELAXED);
	return 0;
}

int mrc_arena_grow(struct mrc_arena *a, size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	bytes = (bytes + page - 1) & ~(page - 1);
	if (bytes <= a->used)
		return 0;
	if (bytes > a->reserved ||
	    mprotect(a->base + a->used, bytes - a->used, PROT_READ | PROT_WRITE))
		return -ENOMEM;
	__atomic_store_n(&a->used, bytes, __ATOMIC_RELEASE);
	return 0;
}

void mrc_arena_release(struct mrc_arena *a)
{
	if (a->map)
		munmap(a->map, a->map_len);
	memset(a, 0, sizeof(*a));
}
