/* SPDX-License-Identifier: MIT */
/*
 * A raw syscall(SYS_munmap) bypasses libmrcache's interposed munmap: the
 * hooks monitor does not see it (a documented limit, docs/monitors.md),
 * so a get on fresh memory mapped at the same address still hits, and the
 * io_uring oracle shows that hit is stale.  The uffd monitor sees the same
 * raw call (the kernel reports it), so its get misses and reads fresh.
 * The same sequence through munmap() misses under hooks: the positive
 * control that the hooks work at all in this program.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#define LEN (64ul << 10)

/* Cache [p, p+LEN), unmap it with `raw` or munmap(), map fresh memory
 * there, and return the oracle's verdict on the next get (*missed set). */
static int unmap_and_probe(struct oracle *o, enum mrcache_monitor_kind m, int raw,
			   int *missed)
{
	struct mrcache_config cfg;
	struct mrcache *c;
	char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int first, v;

	if (p == MAP_FAILED)
		return -errno;
	oracle_config(o, &cfg, m, 16);
	v = mrcache_create(&cfg, &c);
	if (v)
		return v;
	CHECK_EQ(oracle_probe(o, c, p, LEN, &first), ORACLE_FRESH);
	CHECK(first);
	if (raw)
		CHECK_EQ(syscall(SYS_munmap, p, LEN), 0);
	else
		CHECK_EQ(munmap(p, LEN), 0);
	CHECK(mmap(p, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == p);
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

	v = unmap_and_probe(&o, MRCACHE_MONITOR_HOOKS, 0, &missed);
	if (v == -ENOTSUP)
		SKIP("monitor hooks cannot start here");
	printf("hooks, munmap():      %s, %s\n", missed ? "miss" : "hit",
	       v == ORACLE_FRESH ? "fresh" : "stale");
	CHECK(missed && v == ORACLE_FRESH);

	v = unmap_and_probe(&o, MRCACHE_MONITOR_HOOKS, 1, &missed);
	printf("hooks, raw syscall:   %s, %s (documented limit)\n",
	       missed ? "miss" : "hit", v == ORACLE_FRESH ? "fresh" : "stale");
	CHECK(!missed && v == ORACLE_STALE);

	v = unmap_and_probe(&o, MRCACHE_MONITOR_UFFD, 1, &missed);
	if (v >= 0) {
		printf("uffd,  raw syscall:   %s, %s\n", missed ? "miss" : "hit",
		       v == ORACLE_FRESH ? "fresh" : "stale");
		CHECK(missed && v == ORACLE_FRESH);
	} else {
		printf("uffd: cannot start here (%s)\n", strerror(-v));
	}
	oracle_fini(&o);
	return test_result();
}
