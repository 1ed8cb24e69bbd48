/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-basic: watch a range, see the word valid, munmap it, see the
 * word invalid before munmap returned and exactly one UNMAP event with
 * the cookie, the clipped range and the generation; unwatch.  Negative
 * control: a watch on a neighbouring range stays valid.
 */
#include "mrmon_test.h"



int main(void)
{
	struct mon m;
	struct mrmon_event ev[4];
	uint32_t s1, s2;
	uint64_t e1, e2;
	char *p;
	int n;

	CHECK_EQ(mon_open(&m, 16, 16), 0);
	CHECK_EQ(m.hs.abi_version, MRMON_ABI_VERSION);
	CHECK_EQ(m.hdr->nslots, 16);
	p = mon_map_anon(4 * PAGE);
	CHECK(p != NULL);
	CHECK_EQ(mon_watch(&m, p + 100, 2 * PAGE, 0xc00c1e, &s1, &e1), 0);
	CHECK_EQ(mon_watch(&m, p + 3 * PAGE, PAGE, 42, &s2, &e2), 0);
	CHECK(e1 & MRMON_WORD_VALID);
	CHECK(e1 != e2);
	CHECK(mon_valid(&m, s1, e1));
	CHECK(mon_valid(&m, s2, e2));
	CHECK_EQ(m.hdr->pending, 0);

	/* [p + 100, p + 2 PAGE + 100) rounds to [p, p + 3 PAGE). */
	CHECK_EQ(munmap(p + PAGE, PAGE), 0);
	CHECK(!mon_valid(&m, s1, e1));
	CHECK(mon_valid(&m, s2, e2));
	CHECK_EQ(m.hdr->pending, 1);
	CHECK_EQ(m.hdr->invalidations, 1);
	n = mon_events(&m, ev, 4);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(ev[0].cookie, 0xc00c1e);
		CHECK_EQ(ev[0].slot, s1);
		CHECK_EQ(ev[0].generation, e1 >> 1);
		CHECK_EQ(ev[0].start, (uintptr_t)p + PAGE);
		CHECK_EQ(ev[0].end, (uintptr_t)p + 2 * PAGE);
		CHECK_EQ(ev[0].cause, MRMON_CAUSE_UNMAP);
	}
	CHECK_EQ(m.hdr->pending, 0);
	CHECK_EQ(mon_events(&m, ev, 4), 0);

	/* The invalidation freed the watch (ABI 3): UNWATCH says so. */
	CHECK_EQ(mon_unwatch(&m, s1, e1), -ESTALE);
	CHECK_EQ(mon_unwatch(&m, s2, e2), 0);
	CHECK_EQ(mon_unwatch(&m, s2, e2), -ESTALE);
	/* A reused slot gets a new generation. */
	CHECK_EQ(mon_watch(&m, p + 3 * PAGE, PAGE, 43, &s2, &e1), 0);
	CHECK(e1 != e2);
	CHECK(mon_valid(&m, s2, e1));
	munmap(p, 4 * PAGE);
	CHECK(!mon_valid(&m, s2, e1));
	mon_close(&m);
	return test_result();
}
