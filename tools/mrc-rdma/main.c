/* SPDX-License-Identifier: MIT */
/*
 * mrc-rdma - libmrcache's verbs backend end to end, over any RDMA device
 * (Soft-RoCE in the test guest): a loopback pair of RC queue pairs moves
 * data into and out of buffers registered through the cache.
 *
 *   mrc-rdma [--dev NAME] [--gid N] churn --monitor M [--iters N] ...
 *       destination buffers come and go (malloc/free, mmap/munmap/mremap
 *       at reused addresses); every RDMA WRITE and READ is checked against
 *       the application's current mapping.  Exit 0: no stale transfer.
 *   mrc-rdma [--dev NAME] [--gid N] bench [--monitor M] [--transfers N] ...
 *       the cache against ibv_reg_mr on every transfer, the share of time
 *       in deregistration, hit cost against registration cost by size.
 *
 * Exit codes: 0 pass, 1 fail, 2 usage, 77 cannot run here (no device,
 * built without libibverbs, the monitor does not start).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rdma.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrc-rdma [--dev NAME] [--gid N] churn --monitor M [--iters N] [--seed S]\n"
		"                [--slots N] [--max-regions N] [--expect-stale]\n"
		"       mrc-rdma [--dev NAME] [--gid N] bench [--monitor M] [--transfers N]\n"
		"                [--rounds N] [--reps N] [--quick]\n"
		"Exit 0 pass, 1 fail, 2 usage, 77 cannot run here (no RDMA device, no\n"
		"libibverbs, the monitor does not start).\n");
}

static void help(void)
{
	printf("mrc-rdma - libmrcache's verbs backend end to end over an RDMA device\n\n"
	       "A loopback pair of RC queue pairs moves data into and out of buffers\n"
	       "registered through the cache (Soft-RoCE will do).\n"
	       "  churn  destination buffers come and go at reused addresses (malloc/free,\n"
	       "         mmap/munmap/mremap); every RDMA WRITE and READ is checked against\n"
	       "         the application's current mapping\n"
	       "  bench  the cache against ibv_reg_mr on every transfer, the share of time\n"
	       "         in deregistration, hit cost against registration cost by size\n\n");
	usage(stdout);
}

static int bad_usage(const char *what, const char *arg)
{
	if (arg)
		fprintf(stderr, "mrc-rdma: %s '%s'\n", what, arg);
	else
		fprintf(stderr, "mrc-rdma: %s\n", what);
	usage(stderr);
	return 2;
}

static int wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	return 0;
}

int rdma_parse_num(const char *s, int binary, uint64_t *out)
{
	unsigned long long v, mul = 1, unit = binary ? 1024 : 1000;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		mul = unit, end++;
	else if (*end == 'm' || *end == 'M')
		mul = unit * unit, end++;
	if (*end || v > ~0ull / mul)
		return -EINVAL;
	*out = v * mul;
	return 0;
}

int main(int argc, char **argv)
{
	struct rdma_opts o = { .dev = NULL, .gid_index = -1 };
	uint64_t v;
	int i = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (wants_help(argc, argv)) {
		help();
		return 0;
	}
	for (; i < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "--dev") && strcmp(argv[i], "--gid"))
			return bad_usage("unknown option", argv[i]);
		if (i + 1 >= argc)
			return bad_usage("a value must follow", argv[i]);
		if (!strcmp(argv[i], "--dev"))
			o.dev = argv[i + 1];
		else if (!rdma_parse_num(argv[i + 1], 0, &v) && v < 1024)
			o.gid_index = (int)v;
		else
			return bad_usage("--gid takes 0..1023, not", argv[i + 1]);
	}
	if (i >= argc)
		return bad_usage("no command (churn or bench)", NULL);
	if (!strcmp(argv[i], "churn"))
		return churn_main(&o, argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "bench"))
		return bench_main(&o, argc - i - 1, argv + i + 1);
	return bad_usage("unknown command", argv[i]);
}

#ifndef MRC_HAVE_VERBS
static int no_verbs(void)
{
	fprintf(stderr, "mrc-rdma: built without libibverbs (install libibverbs-dev and rebuild)\n");
	return RDMA_SKIP;
}

int churn_main(const struct rdma_opts *o, int argc, char **argv)
{
	return no_verbs();
}

int bench_main(const struct rdma_opts *o, int argc, char **argv)
{
	return no_verbs();
}
#endif
