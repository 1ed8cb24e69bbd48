/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-vmas: finding 1 of issue 24 (any local user could stall the
 * kernel) stays fixed: one operation over many VMAs costs the module a
 * bounded amount of work, however many watches overlap them.
 *
 * As uid 65534 with default limits: 2,000 one-page VMAs (alternating
 * protections keep them apart), and as many watches covering all of them
 * as the module grants (batches of max_batch until one is refused; first
 * a watch of [0, 2^47), whose result is printed).  Then one
 * MADV_DONTNEED over the 2,000 VMAs, which the kernel does as 2,000
 * invalidations.  It must take at most twice its control (the same
 * operation on the same layout without watches) plus 50 ms, and leave
 * every word invalid.  On 1dca6a6 (one interval notifier per watch, each
 * called once per VMA) it took 27.7 s on 6.1 with about 52,000 watches
 * (control 0.01 s).  The kernel log (soft lockups, RCU stalls) is the
 * harness's verdict.
 */
#include <stdio.h>
#include <stdlib.h>
#include "mrmon_priv.h"
#include "mrmon_test.h"

#define VMAS 2000
#define MAX_WATCHES 65536

static char *layout(void)
{
	char *p = mmap(NULL, VMAS * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	for (int i = 0; i < VMAS; i++)
		p[i * PAGE] = 1;
	for (int i = 1; i < VMAS; i += 2)
		CHECK_EQ(mprotect(p + i * PAGE, PAGE, PROT_READ), 0);
	return p;
}

static double dontneed(char *p)
{
	double t0 = priv_now();

	CHECK_EQ(madvise(p, VMAS * PAGE, MADV_DONTNEED), 0);
	return priv_now() - t0;
}

static int child(void *arg)
{
	static struct mrmon_range r[1024];
	static uint32_t slot[MAX_WATCHES];
	static uint64_t exp[MAX_WATCHES];
	char *ctl = layout(), *p = layout();
	double t_ctl, t;
	struct mon m;
	int n = 0, rc = 0, bad = 0, full;
	uint32_t s;
	uint64_t e;

	t_ctl = dontneed(ctl);
	CHECK_EQ(mon_open(&m, 65536, 64), 0);
	full = mon_watch(&m, NULL, (1ul << 47) - PAGE, 0, &s, &e);
	printf("uid %d: WATCH of [0, 2^47): %s\n", (int)getuid(), full ? strerror(-full) : "granted");
	while (n < MAX_WATCHES) {
		struct mrmon_batch b = { .entries = (uintptr_t)r };

		b.count = m.hs.max_batch < 1024 ? m.hs.max_batch : 1024;
		if (b.count > (uint32_t)(MAX_WATCHES - n))
			b.count = MAX_WATCHES - n;
		for (uint32_t i = 0; i < b.count; i++)
			r[i] = (struct mrmon_range){ .start = (uintptr_t)p, .len = VMAS * PAGE };
		rc = mon_ioctl(m.fd, MRMON_IOC_WATCH, &b);
		for (uint32_t i = 0; i < b.done; i++) {
			slot[n] = r[i].slot;
			exp[n++] = r[i].expected;
		}
		if (rc || b.done < b.count)
			break;
	}
	t = dontneed(p);
	for (int i = 0; i < n; i++)
		bad += exp[i] && mon_valid(&m, slot[i], exp[i]);
	printf("MADV_DONTNEED over %d VMAs: %.3f s with %d watches over them (then %s), "
	       "%.3f s without (control); %d words still valid\n", VMAS, t, n,
	       rc ? strerror(-rc) : "the test's cap", t_ctl, bad);
	CHECK(n > 0);
	CHECK(t <= 2 * t_ctl + 0.050);
	CHECK_EQ(bad, 0);
	mon_close(&m);
	return test_result();
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	CHECK_EQ(mon_run_as_nobody(child, NULL), 0);
	return test_result();
}
