/* SPDX-License-Identifier: MIT */
/*
 * mrcache_set_log() routes the library's messages to the program: an
 * error reaches the function at level 0 with the function's argument,
 * without the "mrcache: " prefix or a newline, and nothing reaches stderr;
 * debug messages only when the level asks for them; a level outside 0..2
 * is -EINVAL and changes nothing.  MRCACHE_LOG_LEVEL (and MRCACHE_DEBUG=1)
 * override the program's level, both ways; a bad MRCACHE_LOG_LEVEL fails
 * create naming it.  Control: with the function reset to NULL the same
 * error is on stderr again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

static int tag;

/* Every message, on stdout: "<level>|<msg>" (stdout is the test's). */
static void record(void *arg, int level, const char *msg)
{
	printf("%d|%s%s\n", level, msg, arg == &tag ? "" : "|WRONG ARG");
}

static int create_destroy(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	rc = mrcache_create(&cfg, &c);
	if (rc == 0)
		mrcache_destroy(c);
	return rc;
}

/* arg: the program's level.  Exit 0, or 2 when create gave -EINVAL. */
static int routed(void *arg)
{
	int rc;

	if (mrcache_set_log(record, &tag, *(int *)arg))
		return 4;
	/* A bad level changes neither the function nor the level. */
	if (mrcache_set_log(NULL, NULL, 3) != -EINVAL || mrcache_set_log(NULL, NULL, -1) != -EINVAL)
		return 5;
	rc = create_destroy();
	return rc == 0 ? 0 : rc == -EINVAL ? 2 : 3;
}

/* Routed, then back to stderr: the error of a bad MRCACHE_MAX_BYTES in
 * both places, a marker on stderr between them. */
static int back_to_stderr(void *arg)
{
	mrcache_set_log(record, &tag, 0);
	if (create_destroy() != -EINVAL)
		return 3;
	fprintf(stderr, "-- back to stderr --\n");
	mrcache_set_log(NULL, NULL, 0);
	return create_destroy() == -EINVAL ? 0 : 3;
}

static int level0, level1;

static void run(const char *const *vars, int *program_level, int want_exit,
		const char *want_out, const char *not_out)
{
	struct test_child res;
	int code = test_child_run(vars, -1, routed, program_level, &res);

	if (code != want_exit || (want_out && !strstr(res.out, want_out)) ||
	    (not_out && strstr(res.out, not_out)) || res.err[0] || strstr(res.out, "WRONG ARG")) {
		fprintf(stderr, "%s, program level %d: exit %d (want %d), want \"%s\"%s%s\n"
			"recorded:\n%sstderr:\n%s\n", vars && vars[0] ? vars[0] : "no variable",
			*program_level, code, want_exit, want_out ? want_out : "",
			not_out ? ", not " : "", not_out ? not_out : "", res.out, res.err);
		CHECK(0);
	}
}

int main(void)
{
	static const char *const bad_size[] = { "MRCACHE_MAX_BYTES=12x", NULL };
	static const char *const env_debug[] = { "MRCACHE_LOG_LEVEL=1", NULL };
	static const char *const env_debug_name[] = { "MRCACHE_LOG_LEVEL=Debug", NULL };
	static const char *const env_info[] = { "MRCACHE_LOG_LEVEL=info", NULL };
	static const char *const env_trace[] = { "MRCACHE_LOG_LEVEL=trace", NULL };
	static const char *const env_error[] = { "MRCACHE_LOG_LEVEL=0", NULL };
	static const char *const old_debug[] = { "MRCACHE_DEBUG=1", NULL };
	static const char *const bad_level[] = { "MRCACHE_LOG_LEVEL=loud", NULL };
	struct test_child res;
	const char *marker;

	level0 = 0;
	level1 = 1;
	run(bad_size, &level0, 2, "0|MRCACHE_MAX_BYTES=\"12x\" is not a size", "1|");
	run(bad_size, &level1, 2, "1|environment: MRCACHE_MAX_BYTES=12x\n", NULL);
	run(env_debug, &level0, 0, "1|environment: MRCACHE_LOG_LEVEL=1\n", NULL);
	run(env_debug_name, &level0, 0, "1|environment: MRCACHE_LOG_LEVEL=Debug\n", NULL);
	run(env_info, &level0, 0, "1|environment: MRCACHE_LOG_LEVEL=info\n", NULL);
	run(env_trace, &level0, 0, "1|environment: MRCACHE_LOG_LEVEL=trace\n", NULL);
	run(old_debug, &level0, 0, "1|environment: MRCACHE_DEBUG=1\n", NULL);
	run(env_error, &level1, 0, NULL, "1|");
	run(bad_level, &level0, 2, "0|MRCACHE_LOG_LEVEL=\"loud\" is not a level", NULL);

	CHECK_EQ(test_child_run(bad_size, -1, back_to_stderr, NULL, &res), 0);
	CHECK(strstr(res.out, "0|MRCACHE_MAX_BYTES=\"12x\" is not a size") != NULL);
	marker = strstr(res.err, "-- back to stderr --\n");
	CHECK(marker == res.err);
	CHECK(marker && strstr(marker, "\nmrcache: MRCACHE_MAX_BYTES=\"12x\" is not a size"));
	if (test_failures)
		fprintf(stderr, "recorded:\n%sstderr:\n%s\n", res.out, res.err);
	return test_result();
}
