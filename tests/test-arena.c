/* SPDX-License-Identifier: MIT */
/*
 * The arena behind the region slabs and the LRU heap (lib/cache/arena.c): the
 * base is aligned as asked, only the grown prefix is "held" (the check
 * never dereferences), growth beyond the reservation fails and changes
 * nothing, and what was grown but never touched is not resident (the
 * memory benchmark's RSS figure relies on it).  Controls: a pointer just
 * below the base and one at the end of the usable part are refused; a
 * touched page is resident.  Under an address-space limit a reservation
 * falls back to less, down to its minimum (control: a minimum above the
 * limit fails).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#include "cache/arena.h"
#include "testutil.h"

#define RESERVE	(1u << 20)
#define ALIGN	(1u << 15)

static int resident_pages(const char *p, size_t len, size_t page)
{
	unsigned char vec[RESERVE / 4096];
	int n = 0;

	if (mincore((void *)p, len, vec))
		return -1;
	for (size_t i = 0; i < len / page; i++)
		n += vec[i] & 1;
	return n;
}

#ifndef TEST_SANITIZED	/* their shadow memory needs the address space */
/* Last: the limit stays for the rest of the process. */
static void limited(struct mrc_arena *a)
{
	struct rlimit lim = { 1ull << 30, 1ull << 30 };	/* far below 16 GiB */

	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
	CHECK_EQ(mrc_arena_reserve(a, 16ull << 30, 16ull << 20, ALIGN), 0);
	CHECK(a->reserved >= 16ull << 20 && a->reserved < 1ull << 30);
	mrc_arena_release(a);
	CHECK_EQ(mrc_arena_reserve(a, 16ull << 30, 2ull << 30, ALIGN), -ENOMEM);
}
#endif

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct mrc_arena a = { 0 };
	char *base;

	CHECK(!mrc_arena_holds(&a, NULL));
	CHECK(!mrc_arena_holds(&a, &a));
	CHECK_EQ(mrc_arena_reserve(&a, RESERVE, RESERVE, ALIGN), 0);
	CHECK_EQ(a.reserved, RESERVE);
	base = a.base;
	CHECK(base != NULL);
	CHECK_EQ((uintptr_t)base % ALIGN, 0);
	CHECK(!mrc_arena_holds(&a, base));		/* nothing usable yet */

	CHECK_EQ(mrc_arena_grow(&a, 1), 0);		/* rounded to a page */
	CHECK_EQ(a.used, page);
	CHECK(mrc_arena_holds(&a, base));
	CHECK(mrc_arena_holds(&a, base + page - 1));
	CHECK(!mrc_arena_holds(&a, base + page));
	CHECK(!mrc_arena_holds(&a, base - 1));

	CHECK_EQ(mrc_arena_grow(&a, RESERVE / 2), 0);
	base[0] = 1;
	base[RESERVE / 2 - 1] = 1;
	CHECK_EQ(resident_pages(base, RESERVE / 2, page), 2);

	CHECK_EQ(mrc_arena_grow(&a, RESERVE + page), -ENOMEM);
	CHECK_EQ(a.used, RESERVE / 2);
	CHECK_EQ(mrc_arena_grow(&a, RESERVE), 0);
	CHECK(mrc_arena_holds(&a, base + RESERVE - 1));
	CHECK(!mrc_arena_holds(&a, base + RESERVE));

	mrc_arena_release(&a);
	CHECK(!mrc_arena_holds(&a, base));
	CHECK_EQ(mrc_arena_grow(&a, page), -ENOMEM);	/* nothing reserved */
#ifndef TEST_SANITIZED
	limited(&a);
#endif
	return test_result();
}
