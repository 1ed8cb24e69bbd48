/* SPDX-License-Identifier: MIT */
/*
 * A bare `make` builds: the Makefile's default goal is `all`, and a dry
 * run of a bare `make` runs no benchmark (mk/bench.mk's `bench` rule once
 * came first and made `make` a 12-minute benchmark).  Runs make on the
 * source tree it is started in (make check-host and the guest both start
 * tests there); nothing is built: -q and -n only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

/* The outer make's jobserver descriptors and options are not ours. */
static void clean_make_env(void)
{
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	unsetenv("MAKEOVERRIDES");
}

static int default_goal_is_all(void)
{
	char line[4096];
	int found = 0, is_all = 0;
	FILE *p = popen("make -pq 2>/dev/null", "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (strncmp(line, ".DEFAULT_GOAL := ", 17) == 0) {
			printf("make -pq: %s", line);
			found = 1;
			is_all = strcmp(line + 17, "all\n") == 0;
		}
	pclose(p);
	CHECK(found);
	return is_all;
}

/* The first word of a recipe line is the program it runs. */
static int runs_bench(const char *line)
{
	size_t n = strcspn(line, " \t\n");
	const char *name = "mrc-bench";
	size_t len = strlen(name);

	return n >= len && strncmp(line + n - len, name, len) == 0 &&
	       (n == len || line[n - len - 1] == '/');
}

static int dry_run_benches(void)
{
	char line[8192];
	int bench = 0, status;
	FILE *p = popen("make -n 2>&1", "r");

	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (runs_bench(line)) {
			printf("make -n would run: %s", line);
			bench = 1;
		}
	status = pclose(p);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return bench;
}

int main(void)
{
	if (access("Makefile", R_OK) || access("mk/bench.mk", R_OK))
		SKIP("not started in the source tree (make check-host starts tests there)");
	if (system("make --version >/dev/null 2>&1") != 0)
		SKIP("no make here");
	clean_make_env();
	/* The control: the check sees a benchmark's command line. */
	CHECK(runs_bench("build/tools/mrc-bench --rounds 9 --json docs/bench.json \\\n"));
	CHECK(!runs_bench("cc -o build/tools/mrc-bench tools/mrc-bench/main.c\n"));
	CHECK_EQ(default_goal_is_all(), 1);
	CHECK_EQ(dry_run_benches(), 0);
	return test_result();
}
