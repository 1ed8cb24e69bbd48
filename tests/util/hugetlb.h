/* SPDX-License-Identifier: MIT */
/* hugetlb.h - huge pages for a test: raise /proc/sys/vm/nr_hugepages by
 * `pages` default-size pages and put the old value back at exit (in the
 * process that raised it only; a forked child's exit leaves it alone).
 * Needs root.  Returns the huge page size, or 0 and the reason in why. */
#ifndef MRC_TEST_HUGETLB_H
#define MRC_TEST_HUGETLB_H

#include <stddef.h>

size_t test_hugetlb_reserve(unsigned pages, char *why, size_t why_len);

#endif
