/* SPDX-License-Identifier: MIT */
/*
 * An MRCACHE_* variable the library does not read (a typo, most likely)
 * gets one warning per process, at the first create that reads the
 * environment, naming it and listing the variables that exist.  Controls:
 * every documented variable set to a valid value warns of nothing, and a
 * cache created with MRCACHE_FLAG_NO_ENV ignores the environment, unknown
 * variables included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

static const char *const documented[] = {
	"MRCACHE_BPF_VARIANT", "MRCACHE_DEBUG", "MRCACHE_LOG_LEVEL", "MRCACHE_MAX_BYTES",
	"MRCACHE_MAX_REGIONS", "MRCACHE_MONITOR", "MRCACHE_PROF", "MRCACHE_STATS",
};

static int create_destroy(unsigned flags)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags = flags;
	if (mrcache_create(&cfg, &c) || mrcache_destroy(c))
		return 1;
	return 0;
}

/* Each step's stderr follows a "step N" line. */
static int steps(void *arg)
{
	int rc = 0;

	fprintf(stderr, "step 1\n");
	rc |= create_destroy(0);
	setenv("MRCACHE_BOGUS_VARIABLE", "1", 1);
	setenv("MRCACHE_MONITORS", "none", 1);
	setenv("XMRCACHE_NOT_OURS", "1", 1);
	fprintf(stderr, "step 2\n");
	rc |= create_destroy(MRCACHE_FLAG_NO_ENV);
	fprintf(stderr, "step 3\n");
	rc |= create_destroy(0);
	fprintf(stderr, "step 4\n");
	rc |= create_destroy(0);
	fprintf(stderr, "end\n");
	return rc;
}

/* What stderr holds between "step N\n" and the next line starting "step"
 * or "end". */
static char *step_output(const char *err, int n)
{
	char mark[16], *out;
	const char *from, *to;

	snprintf(mark, sizeof(mark), "step %d\n", n);
	from = strstr(err, mark);
	if (!from)
		return strdup("(step missing)");
	from += strlen(mark);
	to = strstr(from, n < 4 ? "step " : "end\n");
	if (!to)
		to = from + strlen(from);
	out = strndup(from, (size_t)(to - from));
	return out;
}

int main(void)
{
	static const char *const valid[] = {
		"MRCACHE_BPF_VARIANT=syscall", "MRCACHE_DEBUG=0", "MRCACHE_LOG_LEVEL=0",
		"MRCACHE_MAX_BYTES=0",
		"MRCACHE_MAX_REGIONS=0", "MRCACHE_MONITOR=none", "MRCACHE_PROF=",
		"MRCACHE_STATS=0", NULL,
	};
	struct test_child res;
	char *s[5];

	CHECK_EQ(test_child_run(valid, -1, steps, NULL, &res), 0);
	for (int i = 1; i <= 4; i++)
		s[i] = step_output(res.err, i);
	CHECK_EQ(strlen(s[1]), 0);
	CHECK_EQ(strlen(s[2]), 0);
	CHECK(strstr(s[3], "MRCACHE_BOGUS_VARIABLE") != NULL);
	CHECK(strstr(s[3], "MRCACHE_MONITORS") != NULL);
	CHECK(strstr(s[3], "XMRCACHE_NOT_OURS") == NULL);
	/* One line that names every variable that exists. */
	CHECK(strchr(s[3], '\n') == s[3] + strlen(s[3]) - 1);
	for (size_t i = 0; i < sizeof(documented) / sizeof(documented[0]); i++) {
		char listed[64], last[64];

		snprintf(listed, sizeof(listed), "%s,", documented[i]);
		snprintf(last, sizeof(last), "%s\n", documented[i]);
		if (!strstr(s[3], listed) && !strstr(s[3], last)) {
			fprintf(stderr, "the warning does not list %s\n", documented[i]);
			CHECK(0);
		}
	}
	CHECK_EQ(strlen(s[4]), 0);
	if (test_failures)
		fprintf(stderr, "the child's stderr:\n%s", res.err);
	for (int i = 1; i <= 4; i++)
		free(s[i]);
	return test_result();
}
