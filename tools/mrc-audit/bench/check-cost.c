/* SPDX-License-Identifier: MIT */
/*
 * check-cost - the cost of libmrc-audit's hot path, one SGE check
 * (mra_check: the lkey lookup and one load of the word), without a device:
 * the library's own files, registrations made by hand, words that stay
 * valid.  docs/audit.md "Overhead" runs it:
 *
 *   build/tools/mrc-audit-check-cost [REGISTRATIONS [CHECKS [none]]]
 *
 * With /dev/mrmon absent, or `none`, every word is the library's static
 * valid word; otherwise the words are mrmon's, in its read-only map: the
 * same one load, on memory spread over more cache lines.  Prints ns per
 * check, single thread; no report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "audit.h"

static uint64_t now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned nregs = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	unsigned long checks = argc > 2 ? strtoul(argv[2], NULL, 10) : 20000000ul;
	static char page[4096] __attribute__((aligned(4096)));
	struct mra_tcount *c;
	uint32_t *keys = calloc(nregs ? nregs : 1, sizeof(*keys));
	uint64_t t0, t1;

	if (!nregs || !checks || !keys) {
		fprintf(stderr, "usage: mrc-audit-check-cost [REGISTRATIONS [CHECKS [none]]]\n");
		return 2;
	}
	mra_init();	/* (the constructor ran it already) */
	snprintf(mra.opts.output, sizeof(mra.opts.output), "/dev/null");	/* no report */
	if (argc > 3 && !strcmp(argv[3], "none"))
		mra.w.fd = -1;	/* the static word, the witness left open and unused */
	pthread_mutex_lock(&mra.lock);
	for (unsigned i = 0; i < nregs; i++) {
		struct mra_reg *r = mra_reg_alloc();

		r->va = r->iova = (uintptr_t)page;
		r->len = sizeof(page);
		mra_reg_watch(r);
		r->lkey = keys[i] = (i << 8) | 0x5a;	/* rxe's shape: index << 8 | key */
		mra_reg_publish(r);
	}
	pthread_mutex_unlock(&mra.lock);
	t0 = now();
	for (unsigned long i = 0; i < checks; i++)
		mra_check("bench", keys[i % nregs], (uintptr_t)page, 64);
	t1 = now();
	c = mra_tcount();
	printf("check-cost: %lu checks over %u registrations (witness %s): %.2f ns per SGE, %lu valid\n",
	       checks, nregs, mra.w.fd >= 0 ? "mrmon" : "none", (double)(t1 - t0) / (double)checks,
	       (unsigned long)c->sge_valid);
	return c->sge_valid == checks ? 0 : 1;
}
