/* SPDX-License-Identifier: MIT */
/* timing.c - clocks and medians for mrc-bpf-bench (timing.h). */
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "timing.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

double median_u64(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[n / 2];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median_double(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

double getppid_ns(unsigned batches)
{
	uint64_t *t = calloc(batches, sizeof(*t));
	double med;

	if (!t)
		exit(1);
	for (unsigned i = 0; i < batches; i++) {
		uint64_t t0 = now_ns();

		for (unsigned j = 0; j < SYSCALL_BATCH; j++)
			syscall(SYS_getppid);
		t[i] = now_ns() - t0;
	}
	med = median_u64(t, batches) / SYSCALL_BATCH;
	free(t);
	return med;
}

double getppid_other_ns(unsigned batches)
{
	double v = -1;
	int fd[2], status;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid == 0) {
		v = getppid_ns(batches);
		_exit(write(fd[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &v, sizeof(v)) != sizeof(v))
		v = -1;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return v;
}
