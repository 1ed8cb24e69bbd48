/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-slots: the module's slot table against a model.  Random
 * batches of WATCH and UNWATCH on a descriptor of NSLOTS slots, OPS of
 * them, checked against the live watches kept here:
 *   - WATCH hands out a slot below nslots that holds no live watch, with
 *     its word valid; a batch stops with ENOSPC exactly when every slot is
 *     live, after as many entries as there were free slots;
 *   - UNWATCH of a live watch succeeds, and its slot can be handed out
 *     again;
 *   - after every batch, every word is what the model says: a live
 *     watch's word is what WATCH returned, any other slot's is not valid.
 * Which free slot WATCH picks is the module's business: the test does not
 * depend on the order.
 * The run ends by filling every slot, one WATCH more (ENOSPC), and a
 * close with all of them live.
 * Control: freed slots are handed out again (counted), so the checks see
 * reused slots, not only fresh ones.
 */
#include <stdio.h>
#include "mrmon_test.h"

#define NSLOTS	32
#define OPS	4000
#define BATCH	8

static struct mon m;
static char *page;
static int live[NSLOTS], used[NSLOTS];
static uint64_t expected[NSLOTS];
static unsigned int nlive, reused, full;
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static unsigned int rnd(unsigned int n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (unsigned int)(rnd_state % n);
}

static void check_words(void)
{
	for (int s = 0; s < NSLOTS; s++) {
		uint64_t w = __atomic_load_n(&m.words[s], __ATOMIC_ACQUIRE);

		if (live[s])
			CHECK_EQ(w, expected[s]);
		else
			CHECK(!(w & MRMON_WORD_VALID));
	}
}

/* A batch of n WATCHes of the page. */
static void watch_batch(unsigned int n)
{
	struct mrmon_range r[BATCH] = { 0 };
	struct mrmon_batch b = { .entries = (uintptr_t)r, .count = n };
	unsigned int want = n < NSLOTS - nlive ? n : NSLOTS - nlive;
	int rc;

	for (unsigned int i = 0; i < n; i++)
		r[i] = (struct mrmon_range){ .start = (uintptr_t)page, .len = PAGE, .cookie = i };
	rc = mon_ioctl(m.fd, MRMON_IOC_WATCH, &b);
	CHECK_EQ(rc, want < n ? -ENOSPC : 0);
	CHECK_EQ(b.done, want);
	if (want < n)
		full++;
	for (unsigned int i = 0; i < b.done && i < n; i++) {
		uint32_t s = r[i].slot;

		CHECK(s < NSLOTS);
		CHECK(r[i].expected & MRMON_WORD_VALID);
		if (s >= NSLOTS)
			continue;
		CHECK(!live[s]);	/* never handed out while its watch lives */
		reused += used[s];
		live[s] = used[s] = 1;
		expected[s] = r[i].expected;
		nlive++;
	}
}

/* A batch of n UNWATCHes of distinct live watches (n <= nlive). */
static void unwatch_batch(unsigned int n)
{
	struct mrmon_unwatch_entry u[BATCH] = { 0 };
	struct mrmon_batch b = { .entries = (uintptr_t)u, .count = n };
	int picked[NSLOTS] = { 0 };

	for (unsigned int i = 0; i < n; i++) {
		uint32_t s;

		do
			s = rnd(NSLOTS);
		while (!live[s] || picked[s]);
		picked[s] = 1;
		u[i] = (struct mrmon_unwatch_entry){ .slot = s, .expected = expected[s] };
	}
	CHECK_EQ(mon_ioctl(m.fd, MRMON_IOC_UNWATCH, &b), 0);
	CHECK_EQ(b.done, n);
	for (unsigned int i = 0; i < n; i++) {
		live[u[i].slot] = 0;
		nlive--;
	}
}

int main(void)
{
	CHECK_EQ(mon_open(&m, NSLOTS, 16), 0);
	page = mon_map_anon(PAGE);
	CHECK(page != NULL);
	if (test_failures)
		return test_result();
	for (int op = 0; op < OPS; op++) {
		unsigned int n = 1 + rnd(BATCH);

		/* Lean to WATCH below half full, to UNWATCH above it, so the
		 * run crosses both empty and full. */
		if (nlive && (rnd(NSLOTS) < nlive || rnd(16) == 0))
			unwatch_batch(n < nlive ? n : nlive);
		else
			watch_batch(n);
		check_words();
	}
	/* Fill it whatever the walk left, then one more: ENOSPC. */
	while (nlive < NSLOTS)
		watch_batch(BATCH);
	watch_batch(1);
	check_words();
	printf("%d batches on %d slots: %u slots reused, %u batches stopped by ENOSPC; "
	       "closed with %u live\n", OPS, NSLOTS, reused, full, nlive);
	CHECK(reused > 0);
	mon_close(&m);
	return test_result();
}
