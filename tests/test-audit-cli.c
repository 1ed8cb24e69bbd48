/* SPDX-License-Identifier: MIT */
/*
 * mrc-audit's front end and what its library does without a device or a
 * witness (the host has neither; the guest suite 45-audit.sh tests the
 * audit itself): bad options exit 2 with a message, a program that cannot
 * run 127, the program's status passes through, the report names the
 * witness it had (none here, with the reason, or mrmon), --json writes
 * one object, %p in --output is the pid, a report signal writes a report
 * and the program goes on, SIGTERM reports and still ends the program,
 * and LD_PRELOAD by hand works without the front end.
 * Skips when the tool or the library is not built.
 */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "testutil.h"

static char tool[PATH_MAX], lib[PATH_MAX], tmp[PATH_MAX];

struct run {
	int status;
	char err[8192];
};

/* argv run with stderr captured, stdout to /dev/null; env NAME=VALUE added. */
static void run(struct run *r, const char *env, char *const argv[])
{
	char errpath[PATH_MAX + 8];
	FILE *f;
	size_t n;
	pid_t pid;

	snprintf(errpath, sizeof(errpath), "%s/err", tmp);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen(errpath, "w", stderr);
		if (env)
			putenv((char *)env);
		alarm(20);
		execv(argv[0], argv);
		_exit(126);
	}
	waitpid(pid, &r->status, 0);
	f = fopen(errpath, "r");
	n = f ? fread(r->err, 1, sizeof(r->err) - 1, f) : 0;
	r->err[n] = 0;
	if (f)
		fclose(f);
}

static int exit_code(const struct run *r)
{
	return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	buf[n] = 0;
	if (f)
		fclose(f);
	return buf;
}

static void bad_input(void)
{
	struct run r;

	run(&r, NULL, (char *[]){ tool, NULL });
	CHECK_EQ(exit_code(&r), 2);
	CHECK(strstr(r.err, "no program given"));
	run(&r, NULL, (char *[]){ tool, "--bogus", "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 2);
	CHECK(strstr(r.err, "--bogus"));
	run(&r, NULL, (char *[]){ tool, "--signal", "FOO", "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 2);
	CHECK(strstr(r.err, "FOO"));
	run(&r, NULL, (char *[]){ tool, "--output", "", "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 2);
	run(&r, NULL, (char *[]){ tool, "--library", "/nonexistent/lib.so", "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 2);
	CHECK(strstr(r.err, "/nonexistent/lib.so"));
	run(&r, NULL, (char *[]){ tool, "--", "/nonexistent/program", NULL });
	CHECK_EQ(exit_code(&r), 127);
	CHECK(strstr(r.err, "/nonexistent/program"));
	run(&r, "MRC_AUDIT_LIB=/nonexistent/lib.so", (char *[]){ tool, "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 127);
	CHECK(strstr(r.err, "cannot find"));
}

static void report_and_status(void)
{
	char out[PATH_MAX + 16], *s;
	struct run r;

	run(&r, NULL, (char *[]){ tool, "--", "/bin/false", NULL });
	CHECK_EQ(exit_code(&r), 1);
	CHECK(strstr(r.err, "report at exit"));	/* stderr by default */
	snprintf(out, sizeof(out), "%s/text", tmp);
	run(&r, NULL, (char *[]){ tool, "-o", out, "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 0);
	s = slurp(out);
	CHECK(strstr(s, "report at exit"));
	CHECK(strstr(s, "0 stale uses"));
	/* Without the module: none, saying why and that the userfaultfd
	 * witness can be asked for (never taken by default). */
	if (access("/dev/mrmon", F_OK))
		CHECK(strstr(s, "witness: none: /dev/mrmon") &&
		      strstr(s, "MRC_AUDIT_WITNESS=uffd gives a weaker witness"));
	else
		CHECK(strstr(s, "witness: /dev/mrmon"));
}

static void json_and_pid(void)
{
	char pat[PATH_MAX + 16], *s;
	struct run r;
	glob_t g;

	snprintf(pat, sizeof(pat), "%s/j.%%p", tmp);
	run(&r, NULL, (char *[]){ tool, "--json", "-o", pat, "--", "/bin/true", NULL });
	CHECK_EQ(exit_code(&r), 0);
	/* %p became the program's pid: one file j.<digits> */
	snprintf(pat, sizeof(pat), "%s/j.[0-9]*", tmp);
	if (glob(pat, 0, NULL, &g)) {
		CHECK(!"a report file j.<pid>");
		return;
	}
	CHECK_EQ(g.gl_pathc, 1);
	s = slurp(g.gl_pathv[0]);
	globfree(&g);
	CHECK(s[0] == '{');
	CHECK(strstr(s, "\"stale_uses\":0"));
	CHECK(strstr(s, access("/dev/mrmon", F_OK) ? "\"kind\":\"none\"" : "\"kind\":\"mrmon\""));
	CHECK(strstr(s, "\"reason\":\"exit\""));
}

/* Sends sig to pid every 50 ms until path holds text (at most 10 s). */
static int signal_until(pid_t pid, int sig, const char *path, const char *text)
{
	struct timespec tick = { 0, 50000000 };

	for (int i = 0; i < 200; i++) {
		kill(pid, sig);
		nanosleep(&tick, NULL);
		if (strstr(slurp(path), text))
			return 1;
	}
	return 0;
}

/* Whether pid catches sig now (/proc/PID/status SigCgt), within 10 s. */
static int catches(pid_t pid, int sig)
{
	struct timespec tick = { 0, 20000000 };
	char path[64], line[256];
	unsigned long long mask;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	for (int i = 0; i < 500; i++) {
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "SigCgt: %llx", &mask) == 1 && (mask >> (sig - 1) & 1)) {
				fclose(f);
				return 1;
			}
		if (f)
			fclose(f);
		nanosleep(&tick, NULL);
	}
	return 0;
}

/* sleep(1) leaves its signals alone (a shell would reset them). */
static void signals(void)
{
	char out[PATH_MAX + 16], env[PATH_MAX + 64];
	struct run r;
	int status;
	pid_t pid;

	snprintf(out, sizeof(out), "%s/sig", tmp);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stderr);
		execl(tool, tool, "-o", out, "--", "/bin/sleep", "20", (char *)NULL);
		_exit(126);
	}
	if (!catches(pid, SIGTERM)) {	/* the library's constructor has run */
		CHECK(!"the audited program catches SIGTERM");
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	CHECK(signal_until(pid, SIGUSR2, out, "report at signal USR2"));
	CHECK(signal_until(pid, SIGTERM, out, "report at signal TERM"));
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	/* LD_PRELOAD by hand, no front end */
	unlink(out);
	snprintf(env, sizeof(env), "MRC_AUDIT_OUTPUT=%s", out);
	setenv("LD_PRELOAD", lib, 1);
	run(&r, env, (char *[]){ "/bin/true", NULL });
	unsetenv("LD_PRELOAD");
	CHECK_EQ(exit_code(&r), 0);
	CHECK(strstr(slurp(out), "report at exit"));
}

int main(void)
{
	char self[PATH_MAX], cmd[PATH_MAX + 16], rel[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		SKIP("no /proc/self/exe");
	self[n] = 0;
	snprintf(tool, sizeof(tool), "%s/../tools/mrc-audit", dirname(self));
	snprintf(rel, sizeof(rel), "%s/../libmrc-audit.so", self);
	if (access(tool, X_OK) || !realpath(rel, lib))
		SKIP("mrc-audit or libmrc-audit.so not built (no libibverbs-dev?)");
	snprintf(tmp, sizeof(tmp), "/tmp/test-audit-cli.XXXXXX");
	if (!mkdtemp(tmp))
		SKIP("mkdtemp: %s", strerror(errno));
	bad_input();
	report_and_status();
	json_and_pid();
	signals();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", tmp);
	return test_result();
}
