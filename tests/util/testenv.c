/* SPDX-License-Identifier: MIT */
/* testenv.c - see testenv.h. */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testenv.h"

#define WATCHDOG_S 30

void test_env_clear(void)
{
	char name[256];
	size_t n;

	/* unsetenv() edits environ: start over after each removal. */
	for (char **e = environ; e && *e; ) {
		n = strcspn(*e, "=");
		if (strncmp(*e, "MRCACHE_", 8) || n >= sizeof(name)) {
			e++;
			continue;
		}
		memcpy(name, *e, n);
		name[n] = 0;
		unsetenv(name);
		e = environ;
	}
}

static void slurp(FILE *f, char *buf)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, TEST_OUT_MAX - 1, f);
	buf[n] = 0;
	fclose(f);
}

static int become(int uid)
{
	if (uid < 0)
		return 0;
	return setgroups(0, NULL) || setgid((gid_t)uid) || setuid((uid_t)uid) ? -1 : 0;
}

/* In the child: never returns.  _exit() and not exit(): a child that
 * changed its user is not dumpable, and LeakSanitizer's exit-time scan
 * (ptrace) fails there. */
static void child(const char *const *vars, int uid, int (*fn)(void *), void *arg,
		  FILE *out, FILE *err)
{
	int rc;

	dup2(fileno(out), 1);
	dup2(fileno(err), 2);
	alarm(WATCHDOG_S);
	test_env_clear();
	for (; vars && *vars; vars++)
		if (putenv((char *)*vars))
			_exit(126);
	if (become(uid)) {
		perror("test_child_run: cannot change user");
		_exit(126);
	}
	rc = fn(arg);
	fflush(NULL);
	_exit(rc);
}

int test_child_run(const char *const *vars, int uid, int (*fn)(void *), void *arg,
		   struct test_child *res)
{
	FILE *out = tmpfile(), *err = tmpfile();
	pid_t pid;

	res->status = -1;
	res->out[0] = res->err[0] = 0;
	if (!out || !err) {
		if (out)
			fclose(out);
		if (err)
			fclose(err);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		child(vars, uid, fn, arg, out, err);
	if (pid < 0 || waitpid(pid, &res->status, 0) != pid)
		res->status = -1;
	slurp(out, res->out);
	slurp(err, res->err);
	if (res->status == -1 || !WIFEXITED(res->status))
		return -1;
	return WEXITSTATUS(res->status);
}
