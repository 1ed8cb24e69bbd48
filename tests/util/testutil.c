/* SPDX-License-Identifier: MIT */
/* testutil.c - the failure counter behind CHECK (testutil.h). */
#include "testutil.h"

int test_failures;
