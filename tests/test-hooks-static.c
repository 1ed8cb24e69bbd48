/* SPDX-License-Identifier: MIT */
/*
 * The hooks monitor in a fully static program: glibc's free() is linked
 * in place of libmrcache-hooks' and unmaps blocks unseen, so every free()
 * of a registered block left its registration behind (316 stale gets in a
 * churn test).  The monitor must refuse to start, with -ENOTSUP and a
 * message (level 0, no MRCACHE_DEBUG needed) that says why.  The program
 * (tests/hooks-static-prog.c, linked -static by mk/hooks.mk) shows the
 * stale gets when it does start, which is the negative control: a build
 * without the refusal prints "started" and "stale N of 100" with N > 0.
 * Needs MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

int main(void)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char prog[4096], cmd[4200], out[4096];
	int status;

	if (!b)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	snprintf(prog, sizeof(prog), "%s/tests/hooks-static-prog", b);
	if (access(prog, X_OK))
		SKIP("%s was not built (a sanitizer build, or no static libc or liburing)", prog);
	snprintf(cmd, sizeof(cmd), "env -u MRCACHE_DEBUG %s 2>&1", prog);
	status = test_capture(cmd, out, sizeof(out));
	printf("%s:\n%s", prog, out[0] ? out : "(nothing)\n");
	CHECK_EQ(status, 1);
	CHECK(strstr(out, "create: Operation not supported"));
	CHECK(strstr(out, "free() is glibc's own"));
	CHECK(strstr(out, "fully static"));
	CHECK(!strstr(out, "started"));
	return test_result();
}
