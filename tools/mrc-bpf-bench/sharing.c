/* SPDX-License-Identifier: MIT */
/*
 * sharing.c - what a second cache costs with the bpf monitor: the create
 * time of the first and of a second cache, and getppid() in an unrelated
 * process with 0, 1 and 8 caches.  One program set per process: the
 * second create takes a reference, and the filter every system call of
 * every process pays (syscall variant) does not grow with the caches.
 * Public API only.  ROUNDS rounds, each loading the set anew; medians.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "mrcache.h"
#include "timing.h"

#define CACHES 8

static int reg(void *arg, void *addr, size_t len, unsigned access,
	       void **handle, uint64_t *key)
{
	*handle = addr;
	*key = 0;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	return 0;
}

static const struct mrcache_backend_ops ops = { reg, dereg };

static int create(struct mrcache **c, double *ms)
{
	struct mrcache_config cfg;
	uint64_t t0;
	int rc;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.monitor = MRCACHE_MONITOR_BPF;
	t0 = now_ns();
	rc = mrcache_create(&cfg, c);
	*ms = (double)(now_ns() - t0) / 1e6;
	return rc;
}

/* One round: the figures of one load of the set. */
static int round_once(unsigned batches, double *first, double *second, double sys[3])
{
	struct mrcache *c[CACHES];
	double ms;
	int n = 0, rc;

	sys[0] = getppid_other_ns(batches);
	rc = create(&c[n++], first);
	if (!rc) {
		sys[1] = getppid_other_ns(batches);
		rc = create(&c[n++], second);
	}
	while (!rc && n < CACHES)
		rc = create(&c[n++], &ms);
	if (!rc)
		sys[2] = getppid_other_ns(batches);
	else
		n--;
	while (n > 0)
		mrcache_destroy(c[--n]);
	return rc;
}

int bench_sharing(unsigned batches)
{
	double first[ROUNDS], second[ROUNDS], sys[3][ROUNDS], s[3] = { 0 };
	int rc;

	for (int r = 0; r < ROUNDS; r++) {
		rc = round_once(batches, &first[r], &second[r], s);
		if (rc) {
			fprintf(stderr, "mrc-bpf-bench: a bpf cache cannot start here: %s\n",
				strerror(-rc));
			return rc == -EPERM || rc == -ENOTSUP ? 77 : 1;
		}
		for (int i = 0; i < 3; i++)
			sys[i][r] = s[i];
	}
	printf("caches sharing the bpf monitor (%d rounds, medians)\n", ROUNDS);
	printf("%22s %22s %26s %26s %26s\n", "create, first (ms)", "create, second (ms)",
	       "getppid other, 0 (ns)", "getppid other, 1 cache", "getppid other, 8 caches");
	printf("%22.1f %22.3f %26.0f %26.0f %26.0f\n\n", median_double(first, ROUNDS),
	       median_double(second, ROUNDS), median_double(sys[0], ROUNDS),
	       median_double(sys[1], ROUNDS), median_double(sys[2], ROUNDS));
	return 0;
}
