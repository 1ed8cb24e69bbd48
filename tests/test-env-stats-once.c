/* SPDX-License-Identifier: MIT */
/*
 * MRCACHE_STATS is read once, at create, like every other variable: a
 * cache created with it true prints its statistics at destroy even when
 * the program changed the environment in between, and one created with it
 * false or unset never does.  Before the fix, mrcache_destroy() read the
 * variable again and a program that unset it after create printed nothing.
 * Control: the same program with MRCACHE_STATS=0 prints nothing, and with
 * MRCACHE_FLAG_NO_ENV nothing either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

struct step {
	unsigned flags;
	const char *later;	/* MRCACHE_STATS after create; NULL: unset */
};

static int create_change_destroy(void *arg)
{
	const struct step *st = arg;
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags = st->flags;
	if (mrcache_create(&cfg, &c))
		return 2;
	if (st->later)
		setenv("MRCACHE_STATS", st->later, 1);
	else
		unsetenv("MRCACHE_STATS");
	return mrcache_destroy(c) ? 3 : 0;
}

/* 1 when the child printed the statistics, 0 when not, -1 on failure. */
static int printed(const char *var, unsigned flags, const char *later)
{
	const char *vars[] = { var, NULL };
	struct step st = { flags, later };
	static struct test_child res;

	if (test_child_run(vars, -1, create_change_destroy, &st, &res)) {
		fprintf(stderr, "%s: the child failed: %s\n", var ? var : "unset", res.err);
		return -1;
	}
	return strstr(res.err, "mrcache stats") != NULL;
}

int main(void)
{
	CHECK_EQ(printed("MRCACHE_STATS=1", 0, NULL), 1);
	CHECK_EQ(printed("MRCACHE_STATS=yes", 0, "0"), 1);
	CHECK_EQ(printed("MRCACHE_STATS=1", 0, "1"), 1);
	CHECK_EQ(printed("MRCACHE_STATS=0", 0, "1"), 0);
	CHECK_EQ(printed("MRCACHE_STATS=off", 0, "yes"), 0);
	CHECK_EQ(printed(NULL, 0, "1"), 0);
	CHECK_EQ(printed("MRCACHE_STATS=1", MRCACHE_FLAG_NO_ENV, "1"), 0);
	return test_result();
}
