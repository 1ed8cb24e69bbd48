/* SPDX-License-Identifier: MIT */
/*
 * Linking the hooks monitor under -Wl,--as-needed (Debian's default for
 * many builds).  A program that calls none of libmrcache-hooks' functions
 * itself loses the library when linked `-lmrcache-hooks -lmrcache`: the
 * hooks monitor must then fail with -EOPNOTSUPP and a message that says
 * the library is not loaded and how to link it, not suggest the link line
 * the program already has.  The link line the README gives (push-state,
 * --no-as-needed) keeps it, and so does LD_PRELOAD; a libmrcache-hooks
 * loaded with dlopen() is there but cannot interpose, and says so.
 * The programs are tests/hooks-link-prog.c, linked by mk/hooks.mk.
 * Needs MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "testutil.h"

static char build[3072];

/* Run `env prog args` with stderr merged; its output in out, exit code
 * returned (-1 if it did not exit). */
static int run(const char *env, const char *prog, const char *args, char *out, size_t len)
{
	char cmd[8192];
	int rc;

	snprintf(cmd, sizeof(cmd), "%s %s/tests/hooks-link-%s %s 2>&1", env, build, prog, args);
	rc = test_capture(cmd, out, len);
	printf("%s %s %s:\n  %s", env, prog, args, out[0] ? out : "(nothing)\n");
	return rc;
}

int main(void)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char out[4096], preload[4400], hooks_so[4200];
	int rc;

	if (!b)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	snprintf(build, sizeof(build), "%s", b);
	snprintf(hooks_so, sizeof(hooks_so), "%s/libmrcache-hooks.so.0", build);
	/* (Under ASan, a preload that comes before its runtime is allowed.) */
	snprintf(preload, sizeof(preload),
		 "ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=%s", hooks_so);

	/* The README's old line under --as-needed: the library is dropped
	 * (unless something else linked in, such as a sanitizer's runtime,
	 * references one of its functions). */
	rc = run("", "as-needed", "", out, sizeof(out));
	if (strstr(out, "libmrcache-hooks loaded")) {
		printf("  (the linker kept libmrcache-hooks here)\n");
		CHECK_EQ(rc, 0);
	} else {
		CHECK_EQ(rc, 1);
		CHECK(strstr(out, "create: Operation not supported"));
		CHECK(strstr(out, "libmrcache-hooks is not loaded in this process"));
		CHECK(strstr(out, "--no-as-needed"));
		CHECK(strstr(out, "LD_PRELOAD"));
	}

	/* Never linked at all: the same message. */
	CHECK_EQ(run("", "none", "", out, sizeof(out)), 1);
	CHECK(strstr(out, "libmrcache-hooks not loaded"));
	CHECK(strstr(out, "libmrcache-hooks is not loaded in this process"));

	/* The documented line keeps it; so does LD_PRELOAD. */
	CHECK_EQ(run("", "fixed", "", out, sizeof(out)), 0);
	CHECK(strstr(out, "started"));
	CHECK_EQ(run(preload, "as-needed", "", out, sizeof(out)), 0);
	CHECK(strstr(out, "started"));

	/* Loaded too late to interpose: a different message. */
	{
		char args[4400];

		snprintf(args, sizeof(args), "dlopen %s", hooks_so);
		CHECK_EQ(run("", "none", args, out, sizeof(out)), 1);
	}
	if (!strstr(out, "dlopen:")) {
		CHECK(strstr(out, "libmrcache-hooks is loaded, but"));
		CHECK(!strstr(out, "is not loaded"));
	}
	return test_result();
}
