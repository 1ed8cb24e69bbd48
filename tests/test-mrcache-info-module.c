/* SPDX-License-Identifier: MIT */
/*
 * With the mrmon module loaded (the guest runs the host tests), mrcache-info
 * reports the ABI version the module's HANDSHAKE gives, which for the
 * module built from this tree is the one the library speaks, and its
 * features.  Skips where /dev/mrmon is absent.  Control: the same output
 * names no other ABI version.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <uapi/linux/mrmon.h>
#include "testenv.h"
#include "testutil.h"

#ifndef MRC_TOOLDIR
#error "mk/api.mk passes the tools' directory"
#endif
#define TOOL MRC_TOOLDIR "/mrcache-info"

static int run_tool(void *arg)
{
	execl(TOOL, TOOL, (char *)NULL);
	perror(TOOL);
	return 127;
}

int main(void)
{
	static struct test_child res;
	char want[64], other[64];

	if (access("/dev/mrmon", F_OK))
		SKIP("no /dev/mrmon here (the module is not loaded)");
	if (access(TOOL, X_OK))
		SKIP("%s is not built", TOOL);
	CHECK_EQ(test_child_run(NULL, -1, run_tool, NULL, &res), 0);
	snprintf(want, sizeof(want), "ABI version   %u (this library speaks %u)\n",
		 MRMON_ABI_VERSION, MRMON_ABI_VERSION);
	snprintf(other, sizeof(other), "ABI version   %u ", MRMON_ABI_VERSION + 1);
	CHECK(strstr(res.out, want) != NULL);
	CHECK(strstr(res.out, other) == NULL);
	CHECK(strstr(res.out, "features      events batch") != NULL);
	CHECK(strstr(res.out, "monitor kernel") == NULL);
	if (test_failures)
		fprintf(stderr, "%s", res.out);
	return test_result();
}
