/* SPDX-License-Identifier: MIT */
/* caps.h - drop one capability from the effective set, for tests that
 * need a limit root would otherwise bypass (RLIMIT_MEMLOCK and
 * CAP_IPC_LOCK).  0 or -errno. */
#ifndef MRC_TEST_CAPS_H
#define MRC_TEST_CAPS_H

int test_drop_capability(int cap);

#endif
