/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/index.c - the writer side of the index the bpf monitor's
 * programs read (layout and reader rules: monitor/bpf/abi.h).
 *
 * Writers are serialised by the caller; readers are BPF programs running
 * concurrently on any CPU, without a lock.  Hence:
 *  - a slot is filled in before its id is stored in a cell (release), and
 *    the level count goes up after that: a reader that finds the id sees
 *    the whole slot;
 *  - an id is never moved inside a cell; removal stores 0 in place, so a
 *    reader walking a cell sees every id that was there when it started;
 *  - a cell's n only shrinks over trailing zeros.
 */
#include <errno.h>
#include "monitor/bpf/bpf.h"

unsigned mrc_bpf_level(uint64_t len)
{
	unsigned k;

	for (k = 0; k < MRC_BPF_LEVELS; k++)
		if (len <= 1ull << MRC_BPF_LEVEL_SHIFT(k))
			break;
	return k;
}

static struct mrc_bpf_cell *cell_of(struct mrc_bpf_index *ix, uint64_t space,
				    unsigned k, uint64_t start)
{
	return &ix->cells[mrc_bpf_cell_hash(space, k, start >> MRC_BPF_LEVEL_SHIFT(k))];
}

/* A bounded list of ids with its length: a cell, or the overflow list. */
static int ids_add(uint32_t *np, uint32_t *ids, uint32_t cap, uint32_t id)
{
	uint32_t i, n = *np;

	for (i = 0; i < n; i++) {
		if (!ids[i]) {
			__atomic_store_n(&ids[i], id, __ATOMIC_RELEASE);
			return 0;
		}
	}
	if (n == cap)
		return -ENOSPC;
	__atomic_store_n(&ids[n], id, __ATOMIC_RELEASE);
	__atomic_store_n(np, n + 1, __ATOMIC_RELEASE);
	return 0;
}

static int ids_del(uint32_t *np, uint32_t *ids, uint32_t id)
{
	uint32_t i, n = *np;

	for (i = 0; i < n; i++)
		if (ids[i] == id)
			break;
	if (i == n)
		return -ENOENT;
	__atomic_store_n(&ids[i], 0, __ATOMIC_RELEASE);
	while (n && !ids[n - 1])
		n--;
	__atomic_store_n(np, n, __ATOMIC_RELEASE);
	return 0;
}

/* Put id in its cell, or in the overflow list when the cell is full. */
static int place(struct mrc_bpf_index *ix, uint64_t space, unsigned k,
		 uint64_t start, uint32_t id, uint32_t *count)
{
	struct mrc_bpf_cell *c = cell_of(ix, space, k, start);
	struct mrc_bpf_ctl *ctl = ix->ctl;
	int err = ids_add(&c->n, c->id, MRC_BPF_CELL_IDS, id);

	if (err)
		err = ids_add(&ctl->overflow_n, ctl->overflow, MRC_BPF_OVERFLOW, id);
	if (!err)
		__atomic_fetch_add(count, 1, __ATOMIC_RELEASE);
	return err;
}

static void unplace(struct mrc_bpf_index *ix, uint64_t space, unsigned k,
		    uint64_t start, uint32_t id, uint32_t *count)
{
	struct mrc_bpf_cell *c = cell_of(ix, space, k, start);

	if (ids_del(&c->n, c->id, id))
		ids_del(&ix->ctl->overflow_n, ix->ctl->overflow, id);
	__atomic_fetch_sub(count, 1, __ATOMIC_RELEASE);
}

int mrc_bpf_index_insert(struct mrc_bpf_index *ix, uint32_t id)
{
	struct mrc_bpf_slot *s = &ix->slots[id];
	struct mrc_bpf_ctl *ctl = ix->ctl;
	int err;

	if (s->level >= MRC_BPF_LEVELS ||
	    (s->fmap && s->flevel >= MRC_BPF_LEVELS))
		return -EINVAL;
	if (id >= ctl->nslots)
		__atomic_store_n(&ctl->nslots, id + 1, __ATOMIC_RELEASE);
	err = place(ix, MRC_BPF_SPACE_VA, s->level, s->start, id,
		    &ctl->level_count[s->level]);
	if (err || !s->fmap)
		return err;
	err = place(ix, s->fmap, s->flevel, s->fstart, id,
		    &ctl->flevel_count[s->flevel]);
	if (err) {
		unplace(ix, MRC_BPF_SPACE_VA, s->level, s->start, id,
			&ctl->level_count[s->level]);
		return err;
	}
	__atomic_fetch_add(&ctl->file_slots, 1, __ATOMIC_RELEASE);
	return 0;
}

void mrc_bpf_index_remove(struct mrc_bpf_index *ix, uint32_t id)
{
	struct mrc_bpf_slot *s = &ix->slots[id];
	struct mrc_bpf_ctl *ctl = ix->ctl;

	unplace(ix, MRC_BPF_SPACE_VA, s->level, s->start, id,
		&ctl->level_count[s->level]);
	if (s->fmap) {
		unplace(ix, s->fmap, s->flevel, s->fstart, id,
			&ctl->flevel_count[s->flevel]);
		__atomic_fetch_sub(&ctl->file_slots, 1, __ATOMIC_RELEASE);
	}
}
