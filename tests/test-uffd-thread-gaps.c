/* SPDX-License-Identifier: MIT */
/*
 * What the uffd monitor alone gets wrong, shown (issue 25 items 2 and
 * 11): without libmrcache-hooks, the kernel queues the unmap event of
 * another thread's munmap or mremap only after that thread released
 * mmap_lock, so a get of memory mapped at the freed address in between
 * returns the old pages (item 2), and right after munmap() returns the
 * cache may not know yet (item 11: the last put does not deregister).
 * docs/monitors.md's table calls both "late (kernel limit)", and `auto`
 * never takes uffd without the hooks (test-monitor-auto-uffd).
 *
 * Runs test-stale-threads built without libmrcache-hooks
 * (nohooks-stale-threads, mk/hooks.mk) under uffd and expects stale gets,
 * and hooks-link-none's "late uffd" count to be above zero; the same
 * count in hooks-link-fixed (libmrcache-hooks linked) must be zero under
 * every monitor that starts here (kernel, bpf, uffd, hooks), as
 * test-stale-threads is for them.  A zero under plain uffd
 * means the kernel reports in time now: the docs must change, so that
 * fails too.  Needs MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "testutil.h"

/* Runs cmd and shows it with its output (in out); its exit code. */
static int run(const char *cmd, char *out, size_t size)
{
	int rc = test_capture(cmd, out, size);

	printf("%s\n%s", cmd, out);
	return rc;
}

/* The sum of "N stale of" over the uffd lines of test-stale-threads. */
static long stale_sum(const char *out, int *lines)
{
	long sum = 0;

	*lines = 0;
	for (const char *l = strstr(out, "  uffd  "); l; l = strstr(l + 1, "  uffd  ")) {
		const char *colon = strchr(l, ':');
		long n;

		if (colon && sscanf(colon + 1, " %ld stale of", &n) == 1) {
			sum += n;
			++*lines;
		}
	}
	return sum;
}

static long late_of(const char *out)
{
	const char *l = strstr(out, "late ");
	long n;

	return l && sscanf(l, "late %ld of", &n) == 1 ? n : -1;
}

static const char *const in_time[] = { "kernel", "bpf", "uffd", "hooks" };

int main(void)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char cmd[4200], out[8192];
	long stale, late;
	int lines;

	if (!b)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	/* Every other monitor, and uffd with the hooks: never late. */
	for (size_t i = 0; i < sizeof(in_time) / sizeof(in_time[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s/tests/hooks-link-fixed late %s 2000 2>&1", b,
			 in_time[i]);
		if (run(cmd, out, sizeof(out)) == 77)
			continue;	/* cannot start here */
		late = late_of(out);
		printf("%s, libmrcache-hooks linked: %ld late\n", in_time[i], late);
		CHECK_EQ(late, 0);
	}

	snprintf(cmd, sizeof(cmd), "%s/tests/hooks-link-none late uffd 20000 2>&1", b);
	if (run(cmd, out, sizeof(out)) == 77)
		SKIP("the uffd monitor cannot start here");
	run(cmd, out, sizeof(out));
	late = late_of(out);
	printf("uffd alone: %ld late (item 11)\n", late);
	if (late == 0)
		printf("uffd alone is in time now: update docs/monitors.md\n");
	CHECK(late > 0);

	snprintf(cmd, sizeof(cmd), "MRC_STALE_ONLY=uffd %s/tests/nohooks-stale-threads 2>&1", b);
	run(cmd, out, sizeof(out));
	stale = stale_sum(out, &lines);
	printf("uffd alone: %ld stale gets in %d variants (item 2)\n", stale, lines);
	CHECK(lines > 0);
	if (lines > 0 && stale == 0)
		printf("uffd alone saw every unmap in time: update docs/monitors.md\n");
	CHECK(stale > 0);
	return test_result();
}
