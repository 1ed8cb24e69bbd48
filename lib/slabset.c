/* SPDX-License-Identifier: MIT */
/* slabset.c - see slabset.h. */
#include <errno.h>
#include <stdlib.h>
#include "region.h"
#include "slabset.h"

#define SLABSET_MIN_SLOTS 16

static size_t slot_of(uintptr_t slab, size_t mask)
{
	uint64_t h = (uint64_t)(slab / REGION_SLAB_BYTES) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & mask;
}

/* Linear probing; nothing is ever removed, so an empty slot ends it. */
static int table_has(const struct mrc_slabset_table *t, uintptr_t slab)
{
	for (size_t i = slot_of(slab, t->mask);; i = (i + 1) & t->mask) {
		uintptr_t v = __atomic_load_n(&t->slot[i], __ATOMIC_RELAXED);

		if (v == slab)
			return 1;
		if (!v)
			return 0;
	}
}

static void table_put(struct mrc_slabset_table *t, uintptr_t slab)
{
	size_t i = slot_of(slab, t->mask);

	while (__atomic_load_n(&t->slot[i], __ATOMIC_RELAXED))
		i = (i + 1) & t->mask;
	__atomic_store_n(&t->slot[i], slab, __ATOMIC_RELEASE);
}

/* A table of twice the size (at least half empty after this add). */
static int grow(struct mrc_slabset *s)
{
	struct mrc_slabset_table *old = s->table, *t;
	size_t slots = old ? 2 * (old->mask + 1) : SLABSET_MIN_SLOTS;

	t = calloc(1, sizeof(*t) + slots * sizeof(t->slot[0]));
	if (!t)
		return -ENOMEM;
	t->mask = slots - 1;
	t->older = old;
	for (size_t i = 0; old && i <= old->mask; i++)
		if (old->slot[i])
			table_put(t, old->slot[i]);
	__atomic_store_n(&s->table, t, __ATOMIC_RELEASE);
	return 0;
}

int mrc_slabset_add(struct mrc_slabset *s, const void *slab)
{
	if (!s->table || 2 * (s->count + 1) > s->table->mask + 1) {
		int rc = grow(s);

		if (rc)
			return rc;
	}
	table_put(s->table, (uintptr_t)slab);
	s->count++;
	return 0;
}

int mrc_slabset_has(const struct mrc_slabset *s, const void *slab)
{
	const struct mrc_slabset_table *t = __atomic_load_n(&s->table, __ATOMIC_ACQUIRE);

	return slab && t && table_has(t, (uintptr_t)slab);
}

void mrc_slabset_fini(struct mrc_slabset *s, void (*f)(void *slab))
{
	struct mrc_slabset_table *t = s->table;

	for (size_t i = 0; t && i <= t->mask; i++)
		if (t->slot[i])
			f((void *)t->slot[i]);
	while (t) {
		struct mrc_slabset_table *older = t->older;

		free(t);
		t = older;
	}
	s->table = NULL;
	s->count = 0;
}
