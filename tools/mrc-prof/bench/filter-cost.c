/* SPDX-License-Identifier: MIT */
/*
 * filter-cost - what mrc-prof's seccomp filter adds to a syscall it lets
 * through.  Forked children alternate, with and without the filter (no
 * tracer: getppid is allowed, so it never stops), each timing 100,000
 * getppid calls; medians of 31 each, side by side, so machine noise hits
 * both alike.  Built as $(BUILD)/tools/mrc-prof-filter-cost.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "seccomp.h"

#define ROUNDS 31
#define CALLS 100000

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ns per getppid in a fresh child, filtered or not; < 0 on failure. */
static double one_round(int filtered)
{
	double ns = -1;
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		uint64_t t;

		if (filtered && mp_seccomp_install(16384))
			_exit(1);
		t = now_ns();
		for (int i = 0; i < CALLS; i++)
			syscall(SYS_getppid);
		ns = (double)(now_ns() - t) / CALLS;
		_exit(write(p[1], &ns, sizeof(ns)) == sizeof(ns) ? 0 : 1);
	}
	if (pid < 0 || read(p[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	close(p[0]);
	close(p[1]);
	return ns;
}

int main(void)
{
	double plain[ROUNDS], filtered[ROUNDS];

	for (int r = 0; r < ROUNDS; r++) {
		plain[r] = one_round(0);
		filtered[r] = one_round(1);
		if (plain[r] < 0 || filtered[r] < 0) {
			fprintf(stderr, "filter-cost: a measuring child failed\n");
			return 1;
		}
	}
	qsort(plain, ROUNDS, sizeof(double), cmp);
	qsort(filtered, ROUNDS, sizeof(double), cmp);
	printf("getppid: %.0f ns without the filter, %.0f ns with it (medians of %d x %d): "
	       "+%.0f ns per allowed syscall\n", plain[ROUNDS / 2], filtered[ROUNDS / 2], ROUNDS,
	       CALLS, filtered[ROUNDS / 2] - plain[ROUNDS / 2]);
	return 0;
}
