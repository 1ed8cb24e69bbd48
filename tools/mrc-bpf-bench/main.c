/* SPDX-License-Identifier: MIT */
/*
 * mrc-bpf-bench - what the bpf monitor costs, in one run on this machine:
 * munmap of a touched 4 KiB page unwatched and watched, and a cheap
 * unrelated system call (getppid) in this process and in another one,
 * with 10 to 100,000 watched ranges, against the same operations with the
 * programs detached.  The machine is noisy: each row alternates detached and
 * attached measurements ROUNDS times and reports the median of the rounds'
 * medians; compare within a row.  First, what caches sharing the monitor
 * cost (sharing.c): a first and a second create, and getppid in an
 * unrelated process with 0, 1 and 8 caches.
 *
 *   mrc-bpf-bench [-n SAMPLES] [-c COUNT,COUNT,...]
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "monitor/bpf/bpf.h"
#include "timing.h"

#define MAX_COUNTS 16
#define MAX_WATCHED (MRC_BPF_SLOTS - 9)

struct bench_args {
	unsigned samples;
	unsigned long counts[MAX_COUNTS];
	int ncounts;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: mrc-bpf-bench [-n SAMPLES] [-c COUNT,COUNT,...]\n"
		"  -n, --samples N   samples per measurement, above 10 (default 3001)\n"
		"  -c, --counts LIST watched ranges per row, ascending, 1..%u\n"
		"                    (default 10,100,1000,10000,100000)\n"
		"  -h, --help        this text\n"
		"Exit 0 measured, 1 failed, 2 usage, 77 the bpf monitor cannot start here.\n",
		MAX_WATCHED);
}

static void help(void)
{
	printf("mrc-bpf-bench - what the bpf monitor costs on this machine\n\n"
	       "munmap of a touched page, unwatched and watched, and an unrelated system\n"
	       "call (getppid) in this process and in another one, with the monitor's\n"
	       "programs attached against detached, for each number of watched ranges;\n"
	       "before that, the create time of a first and a second cache and getppid in\n"
	       "an unrelated process with 0, 1 and 8 caches (one program set per process).\n\n");
	usage(stdout);
}

static int parse_counts(const char *s, unsigned long *c)
{
	int n = 0;

	while (*s && n < MAX_COUNTS) {
		char *end;

		c[n] = strtoul(s, &end, 10);
		if (end == s || !c[n] || c[n] > MAX_WATCHED)
			return -EINVAL;
		n++;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* -1: go on and measure; otherwise the exit status. */
static int parse_args(int argc, char **argv, struct bench_args *a)
{
	static const struct option opts[] = {
		{ "samples", required_argument, NULL, 'n' },
		{ "counts", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int opt, n;

	while ((opt = getopt_long(argc, argv, "n:c:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (atoi(optarg) <= 10) {
				fprintf(stderr, "mrc-bpf-bench: -n takes a number above 10\n");
				return 2;
			}
			a->samples = (unsigned)atoi(optarg);
			break;
		case 'c':
			n = parse_counts(optarg, a->counts);
			if (n <= 0) {
				fprintf(stderr, "mrc-bpf-bench: -c takes counts 1..%u\n", MAX_WATCHED);
				return 2;
			}
			a->ncounts = n;
			break;
		case 'h':
			help();
			return 0;
		default:	/* getopt named the option */
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mrc-bpf-bench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

#ifndef MRC_HAVE_BPF
static int bench(const struct bench_args *args)
{
	fprintf(stderr, "mrc-bpf-bench: built without libbpf; nothing to measure\n");
	return 77;
}
#else
#define PAGE 4096ul

static unsigned samples;

/* Called around each munmap; watch/unwatch a page when a monitor is given. */
struct munmap_probe {
	struct mrc_monitor *mon;
	int watched;
};

static double munmap_ns(struct munmap_probe *p)
{
	uint64_t *t = calloc(samples, sizeof(*t));
	double med;

	if (!t)
		exit(1);
	for (unsigned i = 0; i < samples; i++) {
		struct mrc_watch w = { 0 };
		/* The page sits between two PROT_NONE guards, so every munmap
		 * removes one whole vma whatever else the process maps. */
		char *res = mmap(NULL, 3 * PAGE, PROT_NONE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *pg = res + PAGE;
		uint64_t t0;

		if (res == MAP_FAILED || mprotect(pg, PAGE, PROT_READ | PROT_WRITE))
			exit(1);
		pg[0] = 1;
		if (p->watched && mrc_bpf_watch(p->mon, (uintptr_t)pg,
						(uintptr_t)pg + PAGE, i, &w))
			exit(1);
		t0 = now_ns();
		munmap(pg, PAGE);
		t[i] = now_ns() - t0;
		munmap(res, 3 * PAGE);
		if (p->watched) {
			if (__atomic_load_n(w.word, __ATOMIC_ACQUIRE) == w.expected) {
				fprintf(stderr, "mrc-bpf-bench: munmap left the word valid\n");
				exit(1);
			}
			mrc_bpf_unwatch(p->mon, &w);
		}
	}
	med = median_u64(t, samples);
	free(t);
	return med;
}

struct row {
	double unwatched, watched, sys_self, sys_other;
};

static void measure(struct mrc_monitor *mon, struct row *r)
{
	struct munmap_probe un = { mon, 0 }, wa = { mon, 1 };

	r->unwatched = munmap_ns(&un);
	r->watched = mon ? munmap_ns(&wa) : 0;
	r->sys_self = getppid_ns(samples / 10 + 1);
	r->sys_other = getppid_other_ns(samples / 10 + 1);
}

/* Median over ROUNDS of each field of rows measured in turn. */
static void median_row(const struct row *rs, struct row *out)
{
	double v[4][ROUNDS];

	for (int i = 0; i < ROUNDS; i++) {
		v[0][i] = rs[i].unwatched;
		v[1][i] = rs[i].watched;
		v[2][i] = rs[i].sys_self;
		v[3][i] = rs[i].sys_other;
	}
	out->unwatched = median_double(v[0], ROUNDS);
	out->watched = median_double(v[1], ROUNDS);
	out->sys_self = median_double(v[2], ROUNDS);
	out->sys_other = median_double(v[3], ROUNDS);
}

/* Detached, then attached, ROUNDS times; 0 or -errno. */
static int compare(struct mrc_monitor *mon, struct mrc_bpf_set *set,
		   struct row *base, struct row *att)
{
	struct row b[ROUNDS], a[ROUNDS];
	unsigned all = samples;
	int err = 0;

	samples = all / ROUNDS + 1;
	for (int i = 0; i < ROUNDS && !err; i++) {
		mrc_bpf_detach(set);
		measure(NULL, &b[i]);
		err = mrc_bpf_attach(set);
		if (!err)
			measure(mon, &a[i]);
	}
	samples = all;
	if (err)
		return err;
	median_row(b, base);
	median_row(a, att);
	return 0;
}

static int bench(const struct bench_args *args)
{
	const unsigned long *counts = args->counts;
	int ncounts = args->ncounts, err;
	struct mrc_watch *ws;
	struct {
		struct row base, r;
		double watch, cells;
	} rows[MAX_COUNTS];
	struct row warm;
	struct mrc_monitor *mon;
	struct mrc_bpf_set *set;
	unsigned long have = 0;
	const char *variant;
	char *area;

	samples = args->samples;
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = bench_sharing(samples / 10 + 1);
	if (err)
		return err;
	measure(NULL, &warm);		/* first faults, caches, TCG */
	err = mrc_monitor_bpf_ops.start(NULL, &mon);
	if (err) {
		fprintf(stderr, "mrc-bpf-bench: the bpf monitor cannot start here: %s\n",
			strerror(-err));
		return 77;
	}
	/* Watched ranges live in a reservation nothing touches: one page in
	 * two, so they are separate ranges. */
	area = mmap(NULL, 2 * PAGE * counts[ncounts - 1], PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ws = calloc(counts[ncounts - 1], sizeof(*ws));
	set = ((struct mrc_bpf_mon *)mon)->set;
	if (area == MAP_FAILED || !ws) {
		fprintf(stderr, "mrc-bpf-bench: out of memory\n");
		return 1;
	}
	for (int c = 0; c < ncounts; c++) {
		struct mrc_bpf_stats *st = &set->ix.ctl->stats;
		struct mrc_bpf_stats st0;
		uint64_t t0 = now_ns();
		unsigned long added = counts[c] > have ? counts[c] - have : 0;

		for (; have < counts[c]; have++) {
			uintptr_t a = (uintptr_t)area + 2 * PAGE * have;

			if (mrc_bpf_watch(mon, a, a + PAGE, have, &ws[have])) {
				fprintf(stderr, "mrc-bpf-bench: watch %lu failed\n", have);
				return 1;
			}
		}
		rows[c].watch = added ? (double)(now_ns() - t0) / (double)added : 0;
		st0 = *st;
		if (compare(mon, set, &rows[c].base, &rows[c].r)) {
			fprintf(stderr, "mrc-bpf-bench: re-attaching failed\n");
			return 1;
		}
		mrc_bpf_route(set);
		rows[c].cells = (double)(st->cells - st0.cells) /
				(double)(st->calls - st0.calls + !(st->calls - st0.calls));
	}
	variant = mrc_bpf_variant_name(set->variant);
	for (unsigned long i = 0; i < have; i++)
		mrc_bpf_unwatch(mon, &ws[i]);
	mrc_monitor_bpf_ops.stop(mon);
	printf("bpf monitor, %s variant; %u samples in %d alternating rounds; "
	       "medians in ns (ratio or difference to the programs detached)\n",
	       variant, samples, ROUNDS);
	printf("%8s %8s %18s %18s %8s %16s %16s %9s %8s\n", "watched", "munmap",
	       "munmap unwatched", "munmap watched", "getppid", "getppid (self)",
	       "getppid (other)", "watch()", "cells/op");
	printf("%8s %8s %18s %18s %8s\n", "", "detached", "", "", "detached");
	for (int c = 0; c < ncounts; c++) {
		const struct row *r = &rows[c].r, *b = &rows[c].base;

		printf("%8lu %8.0f %9.0f (%5.2fx) %9.0f (%5.2fx) %8.0f %7.0f (%+5.0f) %7.0f (%+5.0f) %9.0f %8.2f\n",
		       counts[c], b->unwatched, r->unwatched, r->unwatched / b->unwatched,
		       r->watched, r->watched / b->unwatched, b->sys_self, r->sys_self,
		       r->sys_self - b->sys_self, r->sys_other, r->sys_other - b->sys_other,
		       rows[c].watch, rows[c].cells);
	}
	free(ws);
	munmap(area, 2 * PAGE * counts[ncounts - 1]);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	struct bench_args a = {
		.samples = 3001,
		.counts = { 10, 100, 1000, 10000, 100000 },
		.ncounts = 5,
	};
	int rc = parse_args(argc, argv, &a);

	return rc >= 0 ? rc : bench(&a);
}
