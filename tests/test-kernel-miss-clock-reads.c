/* SPDX-License-Identifier: MIT */
/*
 * A miss with the kernel monitor reads the clock only for the statistics
 * it keeps (register_ns: two reads around the registration), not around
 * the WATCH when the profiler is off.  In the guest, whose clock source is
 * not the TSC, each read is a system call of about 2.4 µs, a seventh of
 * the whole miss (docs/benchmarks.md, "The kernel monitor's miss and
 * reclaim, profiled").  The test counts the clock reads of N misses by
 * defining clock_gettime() in the program, which the statically linked
 * library then calls.  Control: the count is not zero (the interposition
 * sees the library's reads).  Needs the module (the guest); skips elsewhere.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define N 64
#define REG_READS 2	/* register_ns: before and after backend_reg() */

static unsigned long clock_reads;

int clock_gettime(clockid_t id, struct timespec *ts)
{
	clock_reads++;
	return (int)syscall(SYS_clock_gettime, id, ts);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_region *r;
	struct mrcache *c;
	unsigned long reads;
	char *buf;

	c = test_backend_cache_or_skip(&tb, &cfg, MRCACHE_MONITOR_KERNEL);
	buf = mmap(NULL, 2 * N * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED);
	memset(buf, 1, 2 * N * 4096);	/* no fault inside the counted part */

	clock_reads = 0;
	for (int i = 0; i < N; i++) {	/* every other page: N distinct regions */
		CHECK_EQ(mrcache_get(c, buf + 2 * i * 4096, 4096, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
	}
	reads = clock_reads;
	printf("%d misses: %lu clock reads (%.2f per miss; the statistics need %d)\n",
	       N, reads, (double)reads / N, REG_READS);
	CHECK(reads > 0);			/* the control */
	CHECK(reads <= (unsigned long)N * REG_READS);
	CHECK_EQ(tb.regs, N);

	CHECK_EQ(mrcache_destroy(c), 0);
	munmap(buf, 2 * N * 4096);
	return test_result();
}
