/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-leak: 100,000 cycles of open, handshake, setup, mmap, watch
 * (one range then invalidated, one live), close leave kernel memory where
 * it was: slab, vmalloc and used memory (MemTotal - MemFree - page cache)
 * grow by less than a bound far below one leaked object per cycle, and the
 * module's reference count is unchanged.  Control: keeping 1,000 set-up
 * descriptors open must exceed the same bound, so the measurement would
 * see a leak of that size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "mrmon_test.h"

#define CYCLES 100000
#define HELD 1000
#define BOUND_KB 4096		/* < 41 bytes a cycle */

struct mem {
	long slab, vmalloc, used, refs;
};

static long meminfo(const char *key)
{
	char line[128];
	long v = -1, x;
	FILE *f = fopen("/proc/meminfo", "r");
	size_t k = strlen(key);

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, k) && line[k] == ':' && sscanf(line + k + 1, "%ld", &x) == 1)
			v = x;
	if (f)
		fclose(f);
	return v;
}

static struct mem measure(void)
{
	struct mem s;
	FILE *f = fopen("/sys/module/mrmon/refcnt", "r");

	/* Let RCU-deferred frees (slab, notifiers) finish first. */
	usleep(300000);
	s.slab = meminfo("Slab");
	s.vmalloc = meminfo("VmallocUsed");
	s.used = meminfo("MemTotal") - meminfo("MemFree") - meminfo("Cached") - meminfo("Buffers");
	s.refs = -1;
	if (f) {
		if (fscanf(f, "%ld", &s.refs) != 1)
			s.refs = -1;
		fclose(f);
	}
	return s;
}

static int cycle(struct mon *m, char *p)
{
	uint32_t slot;
	uint64_t e;
	int rc = mon_open(m, 64, 64);

	if (!rc)
		rc = mon_watch(m, p, PAGE, 1, &slot, &e);
	if (!rc)
		rc = mon_watch(m, p + PAGE, PAGE, 2, &slot, &e);
	return rc;
}

static void cycles(int n, char *p)
{
	struct mon m;
	int failed = 0;

	for (int i = 0; i < n; i++) {
		if (cycle(&m, p))
			failed++;
		/* Invalidates the first watch: events queued at close. */
		madvise(p, PAGE, MADV_DONTNEED);
		mon_close(&m);
	}
	CHECK_EQ(failed, 0);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *what, struct mem a, struct mem b)
{
	printf("%-28s slab %+ld kB, vmalloc %+ld kB, used %+ld kB, module refs %ld -> %ld\n",
	       what, b.slab - a.slab, b.vmalloc - a.vmalloc, b.used - a.used, a.refs, b.refs);
}

int main(void)
{
	static struct mon held[HELD];
	char *p = mon_map_anon(2 * PAGE);
	struct mem a, b;
	int n = getenv("MRMON_LEAK_CYCLES") ? atoi(getenv("MRMON_LEAK_CYCLES")) : CYCLES;

	struct rlimit rl = { HELD + 64, HELD + 64 };

	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
	double t0, t1;

	setvbuf(stdout, NULL, _IONBF, 0);
	t0 = now_s();
	cycles(1000, p);		/* warm caches up */
	t1 = now_s();
	printf("1,000 cycles in %.2f s; running %d\n", t1 - t0, n);
	a = measure();
	if (a.refs < 0)
		SKIP("mrmon not loaded");
	cycles(n, p);
	b = measure();
	report("after the cycles:", a, b);
	CHECK(b.slab - a.slab < BOUND_KB);
	CHECK(b.vmalloc - a.vmalloc < BOUND_KB);
	CHECK(b.used - a.used < BOUND_KB);
	CHECK_EQ(b.refs, a.refs);

	/* The control, from here: "used" drifts by megabytes over the
	 * cycles (seen -9 MB), either way. */
	a = measure();
	for (int i = 0; i < HELD; i++)
		CHECK_EQ(cycle(&held[i], p), 0);
	b = measure();
	report("holding 1,000 (control):", a, b);
	CHECK(b.used - a.used >= BOUND_KB);
	CHECK_EQ(b.refs, a.refs + HELD);
	for (int i = 0; i < HELD; i++)
		mon_close(&held[i]);
	return test_result();
}
