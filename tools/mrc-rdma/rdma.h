/* SPDX-License-Identifier: MIT */
/* rdma.h - mrc-rdma's subcommands and what they share. */
#ifndef MRC_RDMA_H
#define MRC_RDMA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Exit codes, as the test runners read them. */
#define RDMA_PASS	0
#define RDMA_FAIL	1
#define RDMA_SKIP	77

struct rdma_opts {
	const char *dev;	/* NULL: the first device */
	int gid_index;		/* -1: the first routable one */
};

int churn_main(const struct rdma_opts *o, int argc, char **argv);
int bench_main(const struct rdma_opts *o, int argc, char **argv);

static inline uint64_t rdma_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Parse a decimal count with an optional k/m suffix (powers of 1000 for
 * counts, of 1024 for sizes when `binary`); -EINVAL on garbage. */
int rdma_parse_num(const char *s, int binary, uint64_t *out);

#endif
