/* SPDX-License-Identifier: MIT */
/*
 * The radix index against a brute-force model: random sets, clears,
 * lookups and walks over a few areas that straddle leaf and upper-level
 * boundaries.  The comparison proves it can fail: a deliberately corrupted
 * model entry must be reported.
 */
#include <stdint.h>
#include <stdlib.h>
#include "cache/index.h"
#include "testutil.h"

#define AREA_PAGES	2048
#define AREAS		3
#define PAGE		4096ull

/* Areas around a 2 MiB boundary, a 1 GiB boundary and the 48-bit top. */
static const uint64_t area_base[AREAS] = {
	(1ull << 21) - 512 * PAGE,
	(1ull << 30) - 1024 * PAGE,
	(1ull << 47) - AREA_PAGES * PAGE,
};

static struct mrcache_region *model[AREAS][AREA_PAGES];
static char fake[64];	/* distinct region pointers; never dereferenced */

static struct mrcache_region *fake_region(int i)
{
	return (struct mrcache_region *)&fake[i];
}

struct walk_log {
	struct mrcache_region *seen[AREA_PAGES];
	int n;
};

static int log_region(struct mrcache_region *r, void *arg)
{
	struct walk_log *w = arg;

	w->seen[w->n++] = r;
	return 0;
}

/* Count the regions the model shows in [a, b), each run once. */
static int model_runs(int area, int a, int b, struct walk_log *expect)
{
	struct mrcache_region *last = NULL;

	expect->n = 0;
	for (int p = a; p < b; p++) {
		if (model[area][p] && model[area][p] != last)
			expect->seen[expect->n++] = model[area][p];
		last = model[area][p];
	}
	return expect->n;
}

static int compare_all(struct mrc_index *idx)
{
	int mismatches = 0;

	for (int a = 0; a < AREAS; a++)
		for (int p = 0; p < AREA_PAGES; p++)
			if (mrc_index_lookup(idx, area_base[a] + p * PAGE + (p % 7) * 100) != model[a][p])
				mismatches++;
	return mismatches;
}

int main(void)
{
	struct mrc_index *idx;
	unsigned seed = 12345;

	CHECK_EQ(mrc_index_create(&idx), 0);
	for (int op = 0; op < 20000; op++) {
		int a = rand_r(&seed) % AREAS;
		int p = rand_r(&seed) % AREA_PAGES;
		int len = 1 + rand_r(&seed) % (rand_r(&seed) % 4 ? 8 : 700);
		int kind = rand_r(&seed) % 3;
		uint64_t start = area_base[a] + (uint64_t)p * PAGE;

		if (p + len > AREA_PAGES)
			len = AREA_PAGES - p;
		if (kind == 0) {
			/* The index holds non-overlapping regions: set only
			 * over free pages, as the cache does. */
			int free_run = 1;

			for (int i = p; i < p + len; i++)
				free_run &= model[a][i] == NULL;
			if (!free_run)
				continue;
			struct mrcache_region *r = fake_region(rand_r(&seed) % 64);

			CHECK_EQ(mrc_index_set(idx, start, start + len * PAGE, r), 0);
			for (int i = p; i < p + len; i++)
				model[a][i] = r;
		} else if (kind == 1 && model[a][p]) {
			struct mrcache_region *r = model[a][p];

			mrc_index_clear(idx, start, start + len * PAGE, r);
			for (int i = p; i < p + len; i++)
				if (model[a][i] == r)
					model[a][i] = NULL;
		} else {
			struct walk_log got = { .n = 0 }, expect;

			mrc_index_walk(idx, start, start + len * PAGE - 1, log_region, &got);
			model_runs(a, p, p + len, &expect);
			CHECK_EQ(got.n, expect.n);
			for (int i = 0; i < got.n && i < expect.n; i++)
				CHECK(got.seen[i] == expect.seen[i]);
		}
		if (op % 1000 == 0)
			CHECK_EQ(compare_all(idx), 0);
	}
	CHECK_EQ(compare_all(idx), 0);

	/* Bad ranges change nothing. */
	CHECK_EQ(mrc_index_set(idx, 8192, 4096, fake_region(1)), -22);
	CHECK_EQ(mrc_index_set(idx, 0, (1ull << 48) + 4096, fake_region(1)), -22);
	CHECK(mrc_index_lookup(idx, (uintptr_t)(1ull << 48)) == NULL);
	CHECK_EQ(compare_all(idx), 0);

	/* Negative control: the comparison notices one wrong page. */
	model[1][77] = model[1][77] ? NULL : fake_region(3);
	CHECK(compare_all(idx) == 1);

	mrc_index_destroy(idx);
	return test_result();
}
