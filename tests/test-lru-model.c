/* SPDX-License-Identifier: MIT */
/*
 * The LRU heap (lib/cache/lru.c) against a brute-force model: random adds,
 * removals (which leave holes), uses (last_use moving on) and pops with a
 * filter that refuses some regions.  Every pop must return exactly the
 * least recently used region the filter accepts, as the model finds it
 * by a full scan of its own copy of the use times.  The negative control
 * tells the model a wrong use time and sees the answers differ.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cache/lru.h"
#include "cache/region.h"
#include "testutil.h"

/* Regions over several slabs: entries name regions by their place in the
 * slab arena. */
#define N 1000
#define SLABS ((int)((N + REGION_SLAB_REGIONS - 1) / REGION_SLAB_REGIONS))

static struct mrc_slabset set;
static struct mrc_slab *slab[SLABS];
static int in_lru[N];
static int refused[N];
static uint64_t used[N];	/* the model's copy of last_use */

static struct mrcache_region *reg(int i)
{
	return &slab[i / REGION_SLAB_REGIONS]->hot[i % REGION_SLAB_REGIONS];
}

/* By slab, not by region: the pop's filter asks for every candidate, and
 * a scan of all N regions made the test take minutes under TSan. */
static int index_of(const struct mrcache_region *r)
{
	for (int s = 0; s < SLABS; s++) {
		const struct mrcache_region *hot = slab[s]->hot;

		if (r >= hot && r < hot + REGION_SLAB_REGIONS)
			return s * REGION_SLAB_REGIONS + (int)(r - hot);
	}
	return -1;
}

static int usable(const struct mrcache_region *r, void *arg)
{
	return !refused[index_of(r)];
}

/* The model: the accepted region with the smallest last_use; ties go to
 * any of them, so report the smallest stamp. */
static uint64_t model_min(void)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < N; i++)
		if (in_lru[i] && !refused[i] && used[i] < best)
			best = used[i];
	return best;
}

int main(void)
{
	struct mrc_lru lru;
	unsigned seed = 777;
	uint64_t clock = 1;
	int wrong = 0, pops = 0;

	for (int i = 0; i < SLABS; i++) {
		slab[i] = mrc_slabset_add(&set);
		CHECK(slab[i] != NULL);
	}
	for (int i = 0; i < N; i++)
		region_cold(reg(i))->lru_pos = UINT32_MAX;
	mrc_lru_init(&lru, &set);
	for (int op = 0; op < 200000; op++) {
		int i = rand_r(&seed) % N;
		int kind = rand_r(&seed) % 10;

		if (kind < 3 && !in_lru[i]) {
			used[i] = reg(i)->last_use = clock++;
			CHECK_EQ(mrc_lru_add(&lru, reg(i)), 0);
			in_lru[i] = 1;
		} else if (kind < 5 && in_lru[i]) {
			mrc_lru_remove(&lru, reg(i));
			in_lru[i] = 0;
		} else if (kind < 8 && in_lru[i]) {
			used[i] = reg(i)->last_use = clock++;
		} else if (kind == 8) {
			refused[i] = !refused[i];
		} else {
			uint64_t want = model_min();
			struct mrcache_region *r = mrc_lru_pop(&lru, usable, NULL);

			pops++;
			if (want == UINT64_MAX) {
				wrong += r != NULL;
				continue;
			}
			if (!r || used[index_of(r)] != want || refused[index_of(r)] ||
			    !in_lru[index_of(r)])
				wrong++;
			if (r)
				in_lru[index_of(r)] = 0;
		}
	}
	CHECK_EQ(wrong, 0);
	CHECK(pops > 10000);

	/* Every region still in the model is in the heap, once. */
	for (uint32_t k = 0; k < lru.count; k++) {
		struct mrcache_region *r = mrc_lru_at(&lru, k);

		if (r) {
			CHECK(in_lru[index_of(r)] == 1);
			in_lru[index_of(r)] = 2;
		}
	}
	for (int i = 0; i < N; i++)
		CHECK(in_lru[i] != 1);

	/* Negative control: the model believes the oldest region was used
	 * last; the pop and the model now disagree. */
	memset(refused, 0, sizeof(refused));
	for (int i = 0; i < N; i++) {
		mrc_lru_remove(&lru, reg(i));
		in_lru[i] = 0;
	}
	for (int i = 0; i < 3; i++) {
		used[i] = reg(i)->last_use = clock++;
		CHECK_EQ(mrc_lru_add(&lru, reg(i)), 0);
		in_lru[i] = 1;
	}
	used[0] = clock++;
	CHECK(used[index_of(mrc_lru_pop(&lru, usable, NULL))] != model_min());
	mrc_lru_fini(&lru);
	mrc_slabset_fini(&set);
	return test_result();
}
