/* SPDX-License-Identifier: MIT */
/*
 * mrcache-info lists every monitor with a verdict, says why bpf cannot
 * start for a user without CAP_BPF (uid 65534, when the test runs as
 * root), lists every variable the library describes, flags a set MRCACHE_*
 * variable the library does not read, and exits 1 when the configuration
 * in effect cannot create a cache.  Controls: without the unknown variable
 * nothing is flagged; with a valid MRCACHE_MONITOR the exit status is 0.
 * As root it says what auto takes and why, as the library does: not bpf
 * without MRCACHE_AUTO_BPF=1 ("bpf: not enabled"), bpf with it where bpf
 * starts (unless the kernel monitor does).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "mrcache.h"
#include "testenv.h"
#include "testutil.h"

#ifndef MRC_TOOLDIR
#error "mk/api.mk passes the tools' directory"
#endif
#define TOOL MRC_TOOLDIR "/mrcache-info"
#define NOBODY 65534
#define UNKNOWN_VAR "MRCACHE_NO_SUCH_SETTING"

static int run_tool(void *arg)
{
	execl(TOOL, TOOL, (char *)NULL);
	perror(TOOL);
	return 127;
}

static int info(const char *var, int uid, struct test_child *res)
{
	const char *vars[] = { var, NULL };

	return test_child_run(vars, uid, run_tool, NULL, res);
}

/* The line of stdout that starts with "  name " under Monitors. */
static const char *monitor_line(const char *out, const char *name, char *line, size_t n)
{
	char key[32];
	const char *p, *end;

	snprintf(key, sizeof(key), "\n  %-7s ", name);
	p = strstr(out, key);
	if (!p)
		return "";
	p++;
	end = strchr(p, '\n');
	snprintf(line, n, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
	return line;
}

int main(void)
{
	static const char *const monitors[] = { "kernel", "bpf", "uffd", "hooks", "none" };
	static struct test_child res;
	const char *name;
	char line[1024];
	int bpf_starts;

	if (access(TOOL, X_OK))
		SKIP("%s is not built", TOOL);
	CHECK_EQ(info(UNKNOWN_VAR "=1", -1, &res), 0);
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++) {
		monitor_line(res.out, monitors[i], line, sizeof(line));
		if (strncmp(line + 10, "yes", 3) && strncmp(line + 10, "no: ", 4)) {
			fprintf(stderr, "no verdict for %s: \"%s\"\n", monitors[i], line);
			CHECK(0);
		}
	}
	CHECK(strstr(res.out, "auto    would ") != NULL);
	for (unsigned i = 0; mrcache_env_describe(i, &name, NULL, NULL) == 0; i++)
		CHECK(strstr(res.out, name) != NULL);
	CHECK(strstr(res.out, "unknown to the library") != NULL);
	CHECK(strstr(res.out, "    " UNKNOWN_VAR "\n") != NULL);
	CHECK(strstr(res.out, "Configuration in effect") != NULL);

	CHECK_EQ(info(NULL, -1, &res), 0);
	CHECK(strstr(res.out, "unknown to the library") == NULL);

	CHECK_EQ(info("MRCACHE_MONITOR=nonsense", -1, &res), 1);
	CHECK(strstr(res.out, "mrcache_create fails here") != NULL);
	CHECK(strstr(res.out, "MRCACHE_MONITOR=\"nonsense\"") != NULL);
	CHECK_EQ(info("MRCACHE_MONITOR=none", -1, &res), 0);

	if (geteuid() != 0) {
		printf("not root: the uid %d case is not run\n", NOBODY);
		return test_result();
	}
	CHECK_EQ(info(NULL, -1, &res), 0);
	monitor_line(res.out, "auto", line, sizeof(line));
	printf("as root: %s\n", line);
	if (!strstr(line, "would use kernel"))
		CHECK(strstr(line, "would use bpf") == NULL && strstr(line, "bpf: not enabled"));
	CHECK_EQ(info("MRCACHE_AUTO_BPF=1", -1, &res), 0);
	name = monitor_line(res.out, "bpf", line, sizeof(line));
	bpf_starts = strlen(name) > 10 && !strncmp(name + 10, "yes", 3);
	monitor_line(res.out, "auto", line, sizeof(line));
	printf("as root, MRCACHE_AUTO_BPF=1: %s\n", line);
	if (bpf_starts && !strstr(line, "would use kernel"))
		CHECK(strstr(line, "would use bpf (MRCACHE_AUTO_BPF=1") != NULL);

	CHECK_EQ(info(NULL, NOBODY, &res), 0);
	monitor_line(res.out, "bpf", line, sizeof(line));
	if (!strstr(line, "no: ") || !strstr(line, "CAP_BPF") || !strstr(line, "gives -EPERM;")) {
		fprintf(stderr, "as uid %d: \"%s\"\n%s", NOBODY, line, res.err);
		CHECK(0);
	}
	return test_result();
}
