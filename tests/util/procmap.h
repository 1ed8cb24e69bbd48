/* SPDX-License-Identifier: MIT */
/* procmap.h - make PROCMAP_QUERY (an ioctl on /proc/self/maps, Linux
 * 6.11+) fail with ENOTTY as it does on older kernels, with a seccomp
 * filter on this process (irreversible: fork first to keep the rest of a
 * test unfiltered).  0 or -errno. */
#ifndef MRC_TEST_PROCMAP_H
#define MRC_TEST_PROCMAP_H

#define TEST_PROCMAP_QUERY_NR 17	/* _IOWR('f', 17, struct procmap_query) */

int test_hide_procmap_query(void);

#endif
