/* SPDX-License-Identifier: MIT */
/*
 * A cache works under an address-space limit (RLIMIT_AS, as batch systems
 * set with `ulimit -v`) far below the 16 GiB its slab arena asks for:
 * the reservation falls back to less (lib/cache/arena.h) and gets, hits and
 * puts of a few thousand regions succeed.  Control: the same cache with
 * the limit under the arena's minimum fails its first miss with -ENOMEM,
 * cleanly.  Skipped in sanitizer builds (their shadow memory needs the
 * address space).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "cache/slabset.h"
#include "testbackend.h"
#include "testutil.h"

#define PAGE 4096
#define REGIONS 4000

/* Address space in use now, from /proc/self/statm (pages). */
static unsigned long long vm_bytes(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * PAGE;
}

/* Gets and puts of every region, twice (misses, then hits): 0 or the
 * first error. */
static int use_cache(char *buf)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r;
	int rc = 0;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	for (int round = 0; round < 2 && rc == 0; round++)
		for (int i = 0; i < REGIONS && rc == 0; i++) {
			rc = mrcache_get(c, buf + 2 * (size_t)i * PAGE, PAGE, 0, &r);
			if (rc == 0)
				CHECK_EQ(mrcache_put(c, r), 0);
		}
	CHECK_EQ(mrcache_destroy(c), 0);
	test_backend_fini(&tb);
	return rc;
}

int main(void)
{
	char *buf;
	struct rlimit lim;

#ifdef TEST_SANITIZED
	return 77;
#endif
	buf = mmap(NULL, 2 * (size_t)REGIONS * PAGE, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(buf != MAP_FAILED);
	if (buf == MAP_FAILED)
		return test_result();

	/* Control first: room for less than the arena's minimum.  Only the
	 * soft limit moves, so it can be raised again. */
	CHECK_EQ(getrlimit(RLIMIT_AS, &lim), 0);
	lim.rlim_cur = vm_bytes() + MRC_SLABSET_RESERVE_MIN / 2;
	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
	CHECK_EQ(use_cache(buf), -ENOMEM);

	lim.rlim_cur = vm_bytes() + (1ull << 30);
	CHECK_EQ(setrlimit(RLIMIT_AS, &lim), 0);
	CHECK_EQ(use_cache(buf), 0);
	return test_result();
}
