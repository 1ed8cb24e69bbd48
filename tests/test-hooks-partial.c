/* SPDX-License-Identifier: MIT */
/*
 * A call that fails may still have unmapped part of its range:
 * madvise(MADV_DONTNEED) over a cached range followed by a hole returns
 * ENOMEM but discards the cached pages all the same.  The hooks monitor
 * must report it anyway: the next get misses and the io_uring oracle reads
 * fresh data.  Negative control: under `none` the get hits and the oracle
 * sees the stale registration.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#define LEN (64ul << 10)

static int run(struct oracle *o, enum mrcache_monitor_kind m, int *missed)
{
	struct mrcache_config cfg;
	struct mrcache *c;
	char *p = mmap(NULL, 2 * LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int first, v;

	if (p == MAP_FAILED)
		return -errno;
	CHECK_EQ(munmap(p + LEN, LEN), 0);	/* the hole after the range */
	oracle_config(o, &cfg, m, 16);
	v = mrcache_create(&cfg, &c);
	if (v)
		return v;
	CHECK_EQ(oracle_probe(o, c, p, LEN, &first), ORACLE_FRESH);
	CHECK(first);
	errno = 0;
	CHECK_EQ(madvise(p, 2 * LEN, MADV_DONTNEED), -1);
	CHECK_EQ(errno, ENOMEM);
	v = oracle_probe(o, c, p, LEN, missed);
	CHECK_EQ(mrcache_destroy(c), 0);
	munmap(p, LEN);
	return v;
}

int main(void)
{
	struct oracle o;
	int missed = 0, v;

	if (oracle_init(&o, 1, LEN))
		SKIP("io_uring oracle unavailable");
	v = run(&o, MRCACHE_MONITOR_NONE, &missed);
	printf("none:  %s, %s (negative control)\n", missed ? "miss" : "hit",
	       v == ORACLE_FRESH ? "fresh" : "stale");
	CHECK(!missed && v == ORACLE_STALE);
	v = run(&o, MRCACHE_MONITOR_HOOKS, &missed);
	if (v == -ENOTSUP)
		SKIP("monitor hooks cannot start here");
	printf("hooks: %s, %s\n", missed ? "miss" : "hit", v == ORACLE_FRESH ? "fresh" : "stale");
	CHECK(missed && v == ORACLE_FRESH);
	oracle_fini(&o);
	return test_result();
}
