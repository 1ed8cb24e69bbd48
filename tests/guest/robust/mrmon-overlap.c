/* SPDX-License-Identifier: MIT */
/*
 * mrmon-overlap: measures finding 1 of docs/security.md, the cost of one
 * invalidation when many watches of one descriptor overlap it.  Watches
 * the same 1,024 pages N times, then times madvise(MADV_DONTNEED) of all
 * of them (a CLEAR: each overlapping watch walks its 1,024 pages when it
 * begins, with interrupts off) and munmap of one page (an UNMAP: an event
 * per watch).  Not a CI test: large N holds a CPU in the kernel.
 *   mrmon-overlap N...     (guest only; build line in docs/security.md)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "mrmon_test.h"

#define PAGES 1024

int test_failures;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int one(uint32_t n)
{
	static struct mrmon_range r[1024];
	struct mrmon_batch b = { .entries = (uintptr_t)r };
	char *p = mon_map_anon(PAGES * PAGE);
	double t0, t_clear, t_unmap;
	struct mon m;
	uint32_t done;
	int rc = mon_open(&m, n, 64);

	if (rc || !p) {
		fprintf(stderr, "set-up of %u slots: %s\n", n, strerror(-rc));
		return 1;
	}
	for (done = 0; done < n; done += b.count) {
		b.count = n - done < 1024 ? n - done : 1024;
		b.done = 0;
		for (uint32_t i = 0; i < b.count; i++)
			r[i] = (struct mrmon_range){ .start = (uintptr_t)p, .len = PAGES * PAGE };
		rc = mon_ioctl(m.fd, MRMON_IOC_WATCH, &b);
		if (rc) {
			fprintf(stderr, "watch: %s\n", strerror(-rc));
			return 1;
		}
	}
	t0 = now_s();
	madvise(p, PAGES * PAGE, MADV_DONTNEED);
	t_clear = now_s() - t0;
	t0 = now_s();
	munmap(p + 7 * PAGE, PAGE);
	t_unmap = now_s() - t0;
	printf("%8u overlapping watches of %d pages: MADV_DONTNEED of all %.4f s, munmap of a page %.4f s, invalidations %llu\n",
	       n, PAGES, t_clear, t_unmap, (unsigned long long)m.hdr->invalidations);
	mon_close(&m);
	munmap(p, PAGES * PAGE);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	for (int i = 1; i < argc; i++)
		rc |= one((uint32_t)strtoul(argv[i], NULL, 0));
	return rc;
}
