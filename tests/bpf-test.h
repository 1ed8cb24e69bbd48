/* SPDX-License-Identifier: MIT */
/*
 * bpf-test.h - shared by tests/test-bpf-*.c: the cases only a kernel-side
 * monitor can see run under `bpf` (or `kernel` when MRCACHE_MONITOR names
 * it, as in the guest) and, as the negative control, under `none`.
 */
#ifndef MRC_BPF_TEST_H
#define MRC_BPF_TEST_H

#include <stdlib.h>
#include <string.h>

static inline void bpf_test_pick_monitor(void)
{
	const char *m = getenv("MRCACHE_MONITOR");

	if (!m || (strcmp(m, "bpf") && strcmp(m, "kernel")))
		setenv("MRCACHE_MONITOR", "bpf", 1);
}

#endif
