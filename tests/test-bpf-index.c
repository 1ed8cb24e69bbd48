/* SPDX-License-Identifier: MIT */
/* The bpf monitor's index (lib/monitor/bpf/index.c) against a brute-force
 * model: after random watches and unwatches of virtual and file ranges,
 * the walk the programs do (re-done here in C, as bpf/mrc_monitor.bpf.c
 * does it) must find every live range overlapping a random operation, and
 * the cells must hold no removed id.  Also: full cells spill into the
 * overflow list, a full overflow list gives -ENOSPC, a run of neighbouring
 * buckets shares one page of cells.  Negative control: an id taken out of
 * its cell behind the index's back is reported missing. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "monitor/bpf/bpf.h"
#include "testutil.h"

#define IDS 4000u
#define OPS 20000
#define QUERIES 20

static struct mrc_bpf_ctl ctl;
static struct mrc_bpf_slot *slots;
static struct mrc_bpf_cell *cells;
static struct mrc_bpf_index ix;
static int live[IDS];
static unsigned char *seen;

static uint64_t rnd(void)
{
	return ((uint64_t)random() << 31) ^ (uint64_t)random();
}

static void mark(uint32_t id)
{
	if (id < MRC_BPF_SLOTS)
		seen[id] = 1;
}

/* The programs' walk: mark every id it would check for [s, e). */
static void walk(uint64_t space, uint64_t s, uint64_t e)
{
	const uint32_t *count = space ? ctl.flevel_count : ctl.level_count;

	memset(seen, 0, MRC_BPF_SLOTS);
	for (unsigned k = 0; k < MRC_BPF_LEVELS; k++) {
		unsigned shift = MRC_BPF_LEVEL_SHIFT(k);
		uint64_t b0 = s >> shift, b1 = (e - 1) >> shift;

		if (!count[k])
			continue;
		if (b0)
			b0--;
		if (b1 - b0 >= MRC_BPF_MAX_BUCKETS) {
			for (uint32_t id = 0; id < ctl.nslots; id++)
				mark(id);
			return;
		}
		for (uint64_t b = b0; b <= b1; b++) {
			const struct mrc_bpf_cell *c = &cells[mrc_bpf_cell_hash(space, k, b)];

			for (uint32_t j = 0; j < c->n && j < MRC_BPF_CELL_IDS; j++)
				mark(c->id[j]);
		}
	}
	for (uint32_t i = 0; i < ctl.overflow_n; i++)
		mark(ctl.overflow[i]);
}

static int overlaps(const struct mrc_bpf_slot *sl, uint64_t space, uint64_t s, uint64_t e)
{
	if (!space)
		return sl->start < e && s < sl->end;
	return sl->fmap == space && sl->fstart < e && s < sl->fend;
}

/* Live ranges overlapping [s, e) the walk would not check. */
static unsigned missed(uint64_t space, uint64_t s, uint64_t e)
{
	unsigned n = 0;

	walk(space, s, e);
	for (uint32_t id = 1; id < IDS; id++)
		if (live[id] && overlaps(&slots[id], space, s, e) && !seen[id])
			n++;
	return n;
}

static uint64_t rand_len(void)
{
	static const uint64_t sizes[] = { 4096, 8192, 65536, 1 << 20, 2 << 20, 64 << 20 };

	return sizes[random() % 6] * (1 + random() % 3);
}

static int watch(uint32_t id)
{
	struct mrc_bpf_slot *sl = &slots[id];
	uint64_t len = rand_len();

	memset(sl, 0, sizeof(*sl));
	sl->start = (rnd() % (1ull << 30)) << 12;	/* 4 TiB of address space */
	sl->end = sl->start + len;
	sl->level = mrc_bpf_level(len);
	if (random() % 4 == 0) {
		sl->fmap = 0xffff888000000000ull + 64 * (uint64_t)(random() % 8);
		sl->fstart = (rnd() % (1 << 20)) << 12;
		sl->fend = sl->fstart + len;
		sl->flevel = sl->level;
	}
	return mrc_bpf_index_insert(&ix, id);
}

static void random_ops(void)
{
	for (int op = 0; op < OPS; op++) {
		uint32_t id = 1 + (uint32_t)(random() % (IDS - 1));

		if (live[id]) {
			mrc_bpf_index_remove(&ix, id);
			slots[id].end = 0;
			live[id] = 0;
		} else {
			int err = watch(id);

			CHECK(err == 0 || err == -ENOSPC);
			live[id] = err == 0;
			if (err)
				slots[id].end = 0;
		}
		if (op % 100)
			continue;
		for (int q = 0; q < QUERIES; q++) {
			uint32_t pick = 1 + (uint32_t)(random() % (IDS - 1));
			uint64_t s = (rnd() % (1ull << 30)) << 12, e = s + rand_len();

			CHECK_EQ(missed(0, s, e), 0);
			if (live[pick]) {	/* an operation on a live range */
				const struct mrc_bpf_slot *sl = &slots[pick];

				CHECK_EQ(missed(0, sl->start + 4096, sl->start + 8192), 0);
				if (sl->fmap)
					CHECK_EQ(missed(sl->fmap, sl->fstart, sl->fstart + 4096), 0);
			}
		}
	}
}

/* Cells must hold live ids only, each once in total. */
static void check_cells_sound(void)
{
	unsigned found = 0, want = 0;

	for (uint32_t c = 0; c < MRC_BPF_CELLS; c++)
		for (uint32_t j = 0; j < cells[c].n; j++) {
			uint32_t id = cells[c].id[j];

			if (id) {
				CHECK(id < IDS && live[id]);
				found++;
			}
		}
	for (uint32_t i = 0; i < ctl.overflow_n; i++)
		found += ctl.overflow[i] != 0;
	for (uint32_t id = 1; id < IDS; id++)
		want += live[id] ? 1 + !!slots[id].fmap : 0;
	CHECK_EQ(found, want);
}

/* Many overlapping watches of one page: cell, then overflow, then ENOSPC. */
static void check_overflow(void)
{
	uint32_t id, placed = 0;
	int err = 0;

	for (id = 1; id < IDS && !err; id++) {
		struct mrc_bpf_slot *sl = &slots[id];

		if (live[id]) {
			mrc_bpf_index_remove(&ix, id);
			live[id] = 0;
		}
		memset(sl, 0, sizeof(*sl));
		sl->start = 1ull << 40;
		sl->end = sl->start + 4096;
		err = mrc_bpf_index_insert(&ix, id);
		if (!err) {
			live[id] = 1;
			placed++;
		} else {
			sl->end = 0;
		}
	}
	CHECK_EQ(err, -ENOSPC);
	CHECK_EQ(placed, MRC_BPF_CELL_IDS + MRC_BPF_OVERFLOW);
	CHECK_EQ(ctl.overflow_n, MRC_BPF_OVERFLOW);
	CHECK_EQ(missed(0, 1ull << 40, (1ull << 40) + 4096), 0);
}

/* The negative control: a lost cell entry must be caught. */
static void check_control(void)
{
	struct mrc_bpf_slot *sl = &slots[1];
	struct mrc_bpf_cell *c;

	for (uint32_t id = 1; id < IDS; id++)
		if (live[id]) {
			mrc_bpf_index_remove(&ix, id);
			live[id] = 0;
		}
	memset(sl, 0, sizeof(*sl));
	sl->start = 3ull << 30;
	sl->end = sl->start + 65536;
	sl->level = mrc_bpf_level(65536);
	CHECK_EQ(mrc_bpf_index_insert(&ix, 1), 0);
	live[1] = 1;
	CHECK_EQ(missed(0, sl->start, sl->end), 0);
	c = &cells[mrc_bpf_cell_hash(0, sl->level, sl->start >> MRC_BPF_LEVEL_SHIFT(sl->level))];
	for (uint32_t j = 0; j < c->n; j++)
		if (c->id[j] == 1)
			c->id[j] = 0;
	CHECK_EQ(missed(0, sl->start, sl->end), 1);
}

/* Neighbouring buckets share a page of cells (what keeps a reclaim of
 * neighbouring regions on a few pages), and the runs of one level, of two
 * levels and of two spaces spread over the table.  Control: the buckets
 * of two different runs do not land in one page. */
static void check_cell_runs(void)
{
	const uint32_t per_page = 4096 / sizeof(struct mrc_bpf_cell);
	uint32_t first = mrc_bpf_cell_hash(0, 0, 5 * MRC_BPF_CELL_RUN) / per_page;
	uint32_t pages = 0;
	static unsigned char used[MRC_BPF_CELLS / 64];

	CHECK_EQ(per_page, MRC_BPF_CELL_RUN);
	for (uint32_t i = 0; i < MRC_BPF_CELL_RUN; i++)
		CHECK_EQ(mrc_bpf_cell_hash(0, 0, 5 * MRC_BPF_CELL_RUN + i) / per_page, first);
	CHECK(mrc_bpf_cell_hash(0, 0, 6 * MRC_BPF_CELL_RUN) / per_page != first);
	CHECK(mrc_bpf_cell_hash(0, 1, 5 * MRC_BPF_CELL_RUN) / per_page != first);
	CHECK(mrc_bpf_cell_hash(0xffff888012345000ull, 0, 5 * MRC_BPF_CELL_RUN) / per_page != first);
	/* 1,024 runs of level 0 in a row cover most of the table's pages. */
	for (uint64_t run = 0; run < MRC_BPF_CELLS / MRC_BPF_CELL_RUN; run++) {
		uint32_t pg = mrc_bpf_cell_hash(0, 0, run * MRC_BPF_CELL_RUN) / per_page;

		pages += !used[pg];
		used[pg] = 1;
	}
	CHECK(pages > MRC_BPF_CELLS / MRC_BPF_CELL_RUN / 2);
}

int main(void)
{
	slots = calloc(MRC_BPF_SLOTS, sizeof(*slots));
	cells = calloc(MRC_BPF_CELLS, sizeof(*cells));
	seen = calloc(MRC_BPF_SLOTS, 1);
	if (!slots || !cells || !seen)
		SKIP("out of memory");
	ix.ctl = &ctl;
	ix.slots = slots;
	ix.cells = cells;
	srandom(12345);
	CHECK_EQ(mrc_bpf_level(4096), 0);
	CHECK_EQ(mrc_bpf_level(4097), 1);
	CHECK_EQ(mrc_bpf_level(MRC_BPF_MAX_LEN), MRC_BPF_LEVELS - 1);
	CHECK_EQ(mrc_bpf_level(MRC_BPF_MAX_LEN + 1), MRC_BPF_LEVELS);
	random_ops();
	check_cells_sound();
	check_overflow();
	check_control();
	check_cell_runs();
	return test_result();
}
