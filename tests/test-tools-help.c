/* SPDX-License-Identifier: MIT */
/*
 * Every tool (tools/NAME/, built as $(BUILD)/tools/NAME) answers --help
 * and -h on stdout with a description, a first line "NAME - what it
 * does", and its usage, and exits 0 without running anything; an unknown
 * option gets a message naming it on stderr, nothing on stdout, and exit
 * status 2.  A tool that is not built is skipped; none built skips.
 * Each run has a watchdog: a tool that starts its work instead fails.
 */
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

#ifndef MRC_TOOL_NAMES
#error "the Makefile passes MRC_TOOL_NAMES"
#endif

#define WATCHDOG_S 20
#define OUT_MAX 16384

struct result {
	int status;			/* from waitpid */
	char out[OUT_MAX], err[OUT_MAX];
};

static void slurp(FILE *f, char *buf)
{
	size_t n;

	rewind(f);
	n = fread(buf, 1, OUT_MAX - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* Run `path arg` with stdin empty and stdout, stderr captured. */
static int run(const char *path, const char *arg, struct result *res)
{
	FILE *out = tmpfile(), *err = tmpfile();
	pid_t pid;

	if (!out || !err)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "r", stdin);
		dup2(fileno(out), 1);
		dup2(fileno(err), 2);
		alarm(WATCHDOG_S);	/* kept across exec */
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &res->status, 0) != pid)
		return -1;
	slurp(out, res->out);
	slurp(err, res->err);
	return 0;
}

static const char *how(const struct result *res)
{
	static char buf[32];

	if (WIFEXITED(res->status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(res->status));
	else
		snprintf(buf, sizeof(buf), "signal %d", WTERMSIG(res->status));
	return buf;
}

static int exited(const struct result *res, int code)
{
	return WIFEXITED(res->status) && WEXITSTATUS(res->status) == code;
}

static void check_help(const char *name, const char *path, const char *arg)
{
	char first[128], usage[128];
	struct result res;

	snprintf(first, sizeof(first), "%s - ", name);
	snprintf(usage, sizeof(usage), "usage: %s", name);
	if (run(path, arg, &res)) {
		CHECK(!"fork/exec");
		return;
	}
	printf("%s %s: %s, first line: %.*s\n", name, arg, how(&res),
	       (int)strcspn(res.out, "\n"), res.out);
	CHECK(exited(&res, 0));
	CHECK(strncmp(res.out, first, strlen(first)) == 0 &&
	      strcspn(res.out, "\n") > strlen(first) + 8);
	CHECK(strstr(res.out, usage) != NULL);
	CHECK(res.err[0] == 0);
	if (res.err[0])
		fprintf(stderr, "%s %s wrote to stderr: %s\n", name, arg, res.err);
}

static void check_unknown(const char *name, const char *path)
{
	static const char bogus[] = "--no-such-option-here";
	struct result res;

	if (run(path, bogus, &res)) {
		CHECK(!"fork/exec");
		return;
	}
	printf("%s %s: %s, stderr: %.*s\n", name, bogus, how(&res),
	       (int)strcspn(res.err, "\n"), res.err);
	CHECK(exited(&res, 2));
	CHECK(strstr(res.err, bogus) != NULL);
	CHECK(res.out[0] == 0);
}

int main(int argc, char **argv)
{
	char names[] = MRC_TOOL_NAMES, self[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 64];
	int tested = 0;

	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(dir, sizeof(dir), "%s/../tools", dirname(self));
	for (char *save, *name = strtok_r(names, " ", &save); name;
	     name = strtok_r(NULL, " ", &save)) {
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (access(path, X_OK)) {
			printf("%s: not built, skipped\n", name);
			continue;
		}
		check_help(name, path, "--help");
		check_help(name, path, "-h");
		check_unknown(name, path);
		tested++;
	}
	if (!tested)
		SKIP("no tool built in %s", dir);
	return test_result();
}
