/* SPDX-License-Identifier: MIT */
/* timing.h - clocks and medians shared by mrc-bpf-bench's measurements. */
#ifndef MRC_BPF_BENCH_TIMING_H
#define MRC_BPF_BENCH_TIMING_H

#include <stdint.h>

#define SYSCALL_BATCH 200
#define ROUNDS 5

uint64_t now_ns(void);
/* Sorts v. */
double median_u64(uint64_t *v, unsigned n);
double median_double(double *v, int n);
/* Median over `batches` batches of SYSCALL_BATCH getppid() calls, per
 * call, in this process or in a child of it (not the watched process). */
double getppid_ns(unsigned batches);
double getppid_other_ns(unsigned batches);
/* The sharing figures: the first and a second cache's create, and
 * getppid in another process with 0, 1 and 8 caches (sharing.c). */
int bench_sharing(unsigned batches);

#endif
