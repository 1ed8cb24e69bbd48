/* SPDX-License-Identifier: MIT */
/*
 * mrc-audit's userfaultfd witness, where /dev/mrmon is absent (issue 27):
 * tools/mrc-audit/bench/witness-check makes one registration record by
 * hand and changes its memory.  Under MRC_AUDIT_WITNESS=uffd an munmap
 * followed by an mmap at the address, an MADV_DONTNEED and an mremap away
 * must invalidate the record and an mprotect round trip must not; under
 * =none (the control) nothing is invalidated, so the same checks fail.
 * Needs MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

static int run(const char *witness, char *out, size_t size)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char cmd[4200];
	int rc;

	snprintf(cmd, sizeof(cmd), "MRC_AUDIT_WITNESS=%s %s/tools/mrc-audit-witness-check 2>&1",
		 witness, b);
	rc = test_capture(cmd, out, size);
	printf("%s\n%s", cmd, out);
	return rc;
}

static int invalid(const char *out, const char *name)
{
	char want[64];

	snprintf(want, sizeof(want), "\n%s invalid", name);
	return strstr(out, want) != NULL;
}

int main(void)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char out[4096], path[4096];

	if (!b)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	snprintf(path, sizeof(path), "%s/tools/mrc-audit-witness-check", b);
	if (access(path, X_OK))
		SKIP("%s not built (no libibverbs headers)", path);

	CHECK_EQ(run("uffd", out, sizeof(out)), 0);
	if (strstr(out, "witness none: "))
		SKIP("userfaultfd unusable here");
	CHECK(strstr(out, "witness uffd") != NULL);
	CHECK(!invalid(out, "mprotect"));
	CHECK(invalid(out, "remap"));
	CHECK(invalid(out, "dontneed"));
	CHECK(invalid(out, "mremap"));

	CHECK_EQ(run("none", out, sizeof(out)), 0);
	CHECK(strstr(out, "witness none: MRC_AUDIT_WITNESS=none") != NULL);
	CHECK(!invalid(out, "remap") && !invalid(out, "dontneed") && !invalid(out, "mremap"));
	return test_result();
}
