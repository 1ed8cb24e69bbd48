/* SPDX-License-Identifier: MIT */
/*
 * `auto` takes the uffd monitor only with libmrcache-hooks linked (issue
 * 25, items 2 and 11): without the hooks, uffd sees another thread's
 * munmap or mremap only after that thread released mmap_lock, and a get of
 * memory mapped at the freed address in between hits the old pages.  The
 * programs are tests/hooks-link-prog.c linked without libmrcache-hooks
 * ("none") and with it ("fixed") by mk/hooks.mk, run as an unprivileged
 * user (no module, no CAP_BPF: uffd is what auto would have taken).  Needs
 * MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testenv.h"
#include "testutil.h"

static char prog[4096];

static int run_prog(void *arg)
{
	fflush(stdout);
	execl(prog, prog, "monitor", (const char *)arg, (char *)NULL);
	return 127;
}

static int auto_in(const char *how, const char *monitor, struct test_child *res)
{
	const char *build = getenv("MRC_TEST_BUILD");

	snprintf(prog, sizeof(prog), "%s/tests/hooks-link-%s", build ? build : "build", how);
	if (access(prog, X_OK))
		SKIP("no %s (run through tests/run.sh)", prog);
	return test_child_run(NULL, getuid() == 0 ? 65534 : -1, run_prog, (void *)monitor, res);
}

int main(void)
{
	struct test_child res;
	int rc;

	/* The probe: can this user run uffd at all? */
	rc = auto_in("fixed", "uffd", &res);
	if (rc != 0 || !strstr(res.out, "started uffd"))
		SKIP("the uffd monitor does not start for an unprivileged user here: %s%s",
		     res.out, res.err);
	rc = auto_in("fixed", "auto", &res);
	printf("with libmrcache-hooks, auto: %s", res.out);
	CHECK_EQ(rc, 0);
	/* With the module loaded (the guest suite), auto rightly prefers it:
	 * what this test is about is then only the case without the hooks. */
	if (!strstr(res.out, "started kernel"))
		CHECK(strstr(res.out, "started uffd") != NULL);
	rc = auto_in("none", "auto", &res);
	printf("without libmrcache-hooks, auto: %s%s", res.out, res.err);
	CHECK(strstr(res.out, "started uffd") == NULL);
	rc = auto_in("none", "uffd", &res);
	printf("without libmrcache-hooks, uffd named: %s", res.out);
	CHECK(strstr(res.out, "started uffd") != NULL);
	return test_result();
}
