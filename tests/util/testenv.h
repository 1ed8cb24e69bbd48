/* SPDX-License-Identifier: MIT */
/*
 * testenv.h - run a test step in a process of its own, for what the library
 * reads from the environment and prints: the child starts with every
 * MRCACHE_* variable removed (the harness sets some) and the given ones
 * set, optionally as another user, and its stdout and stderr are collected.
 * A fresh process also resets what the library does once per process
 * (reading the log level, warning about unknown variables).
 */
#ifndef MRC_TEST_ENV_H
#define MRC_TEST_ENV_H

#define TEST_OUT_MAX 16384

struct test_child {
	int status;			/* from waitpid(), -1 if it could not run */
	char out[TEST_OUT_MAX];		/* the child's stdout, NUL-terminated */
	char err[TEST_OUT_MAX];		/* the child's stderr */
};

/* Run fn(arg) in a child with the environment described above: vars is a
 * NULL-terminated list of "NAME=value" (or NULL); uid >= 0 makes the child
 * that user and group (root drops its capabilities so).  fn's return value
 * is the child's exit code; a child killed by its 30 s watchdog fails.
 * Returns the exit code, or -1 when the child did not exit normally. */
int test_child_run(const char *const *vars, int uid, int (*fn)(void *), void *arg,
		   struct test_child *res);

/* Remove every MRCACHE_* variable from this process's environment. */
void test_env_clear(void);

#endif
