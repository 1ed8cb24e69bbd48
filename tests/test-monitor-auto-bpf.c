/* SPDX-License-Identifier: MIT */
/*
 * `auto` attaches the bpf programs (which tax every system call of every
 * process while attached) only when the administrator opted in with
 * MRCACHE_AUTO_BPF=1, not because the program runs as root (issue 25,
 * part 3), and it says which monitor it chose and why in one line at the
 * debug level (the library's info level), never at the default level.
 *
 * As root, without the opt-in: auto does not take bpf and its line says
 * "bpf: not enabled".  With the opt-in, where bpf loads here: auto takes
 * bpf.  Where the mrmon module is loaded (the guest suites), auto takes
 * kernel before bpf is considered: only the line is checked then.
 * Controls: MRCACHE_MONITOR=bpf is the probe that bpf loads here (auto
 * with the opt-in must then take it), a bad MRCACHE_AUTO_BPF fails the
 * create naming the variable, and the same create at the default level
 * prints nothing.  Before the opt-in existed, auto took bpf as root here
 * and the line was "auto: using monitor bpf".
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

#define LINE_PREFIX "mrcache: auto: monitor "

/* Exit 0 after a create and destroy, 2 when create fails; stdout names the
 * monitor in use.  The environment is honoured. */
static int create_auto(void *arg)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_AUTO);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	if (mrcache_create(&cfg, &c))
		return 2;
	if (mrcache_stats_get(c, &st) || mrcache_destroy(c))
		return 3;
	printf("%s\n", mrcache_monitor_name(st.monitor));
	return 0;
}

struct heard {
	int lines, level;
	char line[1024];
};

static void hear(void *arg, int level, const char *msg)
{
	struct heard *h = arg;

	if (strncmp(msg, "auto: monitor ", 14))
		return;
	h->lines++;
	h->level = level;
	snprintf(h->line, sizeof(h->line), "%s", msg);
}

/* The program's own log function: the line comes at MRCACHE_LOG_DEBUG,
 * once, and not at all at MRCACHE_LOG_ERROR.  Exit 0 when so. */
static int through_set_log(void *arg)
{
	struct heard h = { 0 };

	mrcache_set_log(hear, &h, MRCACHE_LOG_ERROR);
	if (create_auto(NULL) || h.lines) {
		printf("at the error level: %d lines (%s)\n", h.lines, h.line);
		return 1;
	}
	mrcache_set_log(hear, &h, MRCACHE_LOG_INFO);
	if (create_auto(NULL) || h.lines != 1 || h.level != MRCACHE_LOG_INFO) {
		printf("at the debug level: %d lines, level %d (%s)\n", h.lines, h.level, h.line);
		return 1;
	}
	printf("set_log line: %s\n", h.line);
	return 0;
}

/* The one "auto: monitor" line of stderr, copied into line; 0 when there
 * is not exactly one. */
static int auto_line(const char *err, char *line, size_t n)
{
	const char *p = strstr(err, LINE_PREFIX), *end;

	if (!p || strstr(p + 1, LINE_PREFIX))
		return 0;
	end = strchr(p, '\n');
	snprintf(line, n, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
	return 1;
}

int main(void)
{
	static const char *const named[] = { "MRCACHE_MONITOR=bpf", NULL };
	static const char *const plain[] = { "MRCACHE_LOG_LEVEL=1", NULL };
	static const char *const optin[] = { "MRCACHE_LOG_LEVEL=1", "MRCACHE_AUTO_BPF=1", NULL };
	static const char *const bad[] = { "MRCACHE_AUTO_BPF=sometimes", NULL };
	static const char *const quiet[] = { "MRCACHE_AUTO_BPF=1", NULL };
	static struct test_child res;
	char monitor[32], line[1024];
	int bpf_loads;

	if (geteuid() != 0)
		SKIP("not root: auto could not take bpf anyway");
	bpf_loads = test_child_run(named, -1, create_auto, NULL, &res) == 0;
	printf("MRCACHE_MONITOR=bpf: %s\n", bpf_loads ? "loads" : "does not load here");

	/* Root, bpf available, no opt-in. */
	CHECK_EQ(test_child_run(plain, -1, create_auto, NULL, &res), 0);
	sscanf(res.out, "%31s", monitor);
	printf("no opt-in: monitor %s\n", monitor);
	CHECK(strcmp(monitor, "bpf") != 0);
	if (!auto_line(res.err, line, sizeof(line))) {
		fprintf(stderr, "not one \"auto: monitor\" line:\n%s", res.err);
		CHECK(0);
	} else {
		printf("  %s\n", line);
		CHECK(!strncmp(line + strlen(LINE_PREFIX), monitor, strlen(monitor)));
		if (strcmp(monitor, "kernel"))
			CHECK(strstr(line, "bpf: not enabled") != NULL);
	}

	/* With the opt-in. */
	CHECK_EQ(test_child_run(optin, -1, create_auto, NULL, &res), 0);
	sscanf(res.out, "%31s", monitor);
	printf("MRCACHE_AUTO_BPF=1: monitor %s\n", monitor);
	if (auto_line(res.err, line, sizeof(line)))
		printf("  %s\n", line);
	else
		CHECK(0);
	if (!strcmp(monitor, "kernel"))
		printf("the kernel monitor starts here: bpf is not considered\n");
	else if (bpf_loads)
		CHECK(!strcmp(monitor, "bpf") && strstr(line, "MRCACHE_AUTO_BPF=1"));
	else
		CHECK(strstr(line, "bpf: ") != NULL);

	/* The default level: nothing on stderr, opt-in or not. */
	CHECK_EQ(test_child_run(quiet, -1, create_auto, NULL, &res), 0);
	if (res.err[0]) {
		fprintf(stderr, "stderr at the default level:\n%s", res.err);
		CHECK(0);
	}
	CHECK_EQ(test_child_run(NULL, -1, through_set_log, NULL, &res), 0);
	printf("%s", res.out);

	/* A value that is not a boolean fails the create, naming it. */
	CHECK_EQ(test_child_run(bad, -1, create_auto, NULL, &res), 2);
	CHECK(strstr(res.err, "MRCACHE_AUTO_BPF=\"sometimes\"") != NULL);
	printf("bad value: %s", res.err);
	return test_result();
}
