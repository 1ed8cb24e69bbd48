/* SPDX-License-Identifier: MIT */
/*
 * Boolean variables read the same everywhere: 1/0, yes/no, on/off,
 * true/false, y/n, in any case.  Anything else fails mrcache_create() with
 * -EINVAL and a message naming the variable.  MRCACHE_STATS=<true> prints
 * the statistics at destroy and MRCACHE_DEBUG=<true> turns debug messages
 * on; every false spelling prints nothing: the negative control of the
 * true ones, through the same program.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

/* Exit 0 when create and destroy succeed, 2 when create gives -EINVAL. */
static int create_destroy(void *arg)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	rc = mrcache_create(&cfg, &c);
	if (rc)
		return rc == -EINVAL ? 2 : 3;
	return mrcache_destroy(c) ? 4 : 0;
}

struct var {
	const char *name;
	const char *when_on;	/* what stderr shows when it is true */
};

static void check(const struct var *v, const char *value, int want_exit, int want_on)
{
	struct test_child res;
	char assignment[128], message[192];
	const char *vars[] = { assignment, NULL };
	int code;

	snprintf(assignment, sizeof(assignment), "%s=%s", v->name, value);
	snprintf(message, sizeof(message), "%s=\"%s\" is not a boolean", v->name, value);
	code = test_child_run(vars, -1, create_destroy, NULL, &res);
	if (code != want_exit || (want_on && !strstr(res.err, v->when_on)) ||
	    (!want_on && want_exit == 0 && res.err[0]) ||
	    (want_exit == 2 && !strstr(res.err, message))) {
		fprintf(stderr, "%s: exit %d (want %d), stderr (want %s):\n%s\n",
			assignment, code, want_exit,
			want_exit ? message : want_on ? v->when_on : "nothing", res.err);
		CHECK(0);
	}
}

int main(void)
{
	static const struct var vars[] = {
		{ "MRCACHE_STATS", "mrcache stats (monitor none)" },
		{ "MRCACHE_DEBUG", "mrcache: environment: MRCACHE_DEBUG=" },
	};
	static const char *const on[] = {
		"1", "yes", "YES", "Yes", "on", "ON", "true", "True", "y", "Y",
	};
	static const char *const off[] = {
		"0", "no", "NO", "off", "Off", "false", "FALSE", "n", "N",
	};
	static const char *const bad[] = {
		"abc", "2", "", "yess", "on1", " 1", "-1", "enable",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		for (size_t k = 0; k < sizeof(on) / sizeof(on[0]); k++)
			check(&vars[i], on[k], 0, 1);
		for (size_t k = 0; k < sizeof(off) / sizeof(off[0]); k++)
			check(&vars[i], off[k], 0, 0);
		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
			check(&vars[i], bad[k], 2, 0);
	}
	return test_result();
}
