/* SPDX-License-Identifier: MIT */
/*
 * What the uffd monitor cannot see without libmrcache-hooks, shown: the
 * kernel sends userfaultfd no event when remap_file_pages() replaces a
 * registered range (an internal mmap with no unmap event), when
 * MADV_REMOVE goes through another mapping of the file (the REMOVE event
 * is the other mapping's), or when this process truncates or punches a
 * hole in the file (no event at all).  The registration stays and the
 * data goes to the old pages: docs/limitations.md documents each as "not
 * seen (kernel limit)", and with libmrcache-hooks linked uffd sees them
 * (test-guarantee-file, the same cases with the interposed calls).
 *
 * Runs test-guarantee-file built without libmrcache-hooks
 * (nohooks-guarantee-file, mk/hooks.mk) under uffd and expects every case
 * STALE under uffd while the negative control (none) passes.  A case that
 * passes means the kernel reports it now: the docs must change, so that
 * fails too.  Needs MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "testutil.h"

static const char *const cases[] = {
	"remap-file-pages", "madv-remove-alias", "punch-hole", "ftruncate", "truncate-path",
};

/* The output line of `name` under `monitor`, or NULL. */
static const char *line_of(const char *out, const char *name, const char *monitor)
{
	size_t nl = strlen(name), ml = strlen(monitor);

	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l + strspn(l, " ");

		if (!strncmp(p, name, nl) && p[nl] == ' ') {
			p += nl + strspn(p + nl, " ");
			if (!strncmp(p, monitor, ml) && p[ml] == ' ')
				return p + ml + strspn(p + ml, " ");
		}
	}
	return NULL;
}

int main(void)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char cmd[4200], out[8192];
	int status;

	if (!b)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	snprintf(cmd, sizeof(cmd), "MRCACHE_MONITOR=uffd %s/tests/nohooks-guarantee-file 2>&1", b);
	status = test_capture(cmd, out, sizeof(out));
	printf("%s\n%s", cmd, out);
	if (strstr(out, "uffd    SKIP (cannot start here"))
		SKIP("the uffd monitor cannot start here");
	if (strstr(out, "SKIP: io_uring unusable here"))
		SKIP("io_uring is unusable here");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *ctl = line_of(out, cases[i], "none");
		const char *v = line_of(out, cases[i], "uffd");

		CHECK(ctl && !strncmp(ctl, "PASS", 4));
		if (v && !strncmp(v, "SKIP", 4))
			continue;	/* io_uring cannot pin it on this kernel */
		if (v && !strncmp(v, "PASS", 4))
			printf("%s: uffd alone sees it now: update docs/limitations.md\n",
			       cases[i]);
		CHECK(v && strstr(v, "STALE"));
	}
	/* The gaps are failures of the guarantee: the program says so. */
	CHECK_EQ(status, 1);
	return test_result();
}
