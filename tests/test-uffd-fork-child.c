/* SPDX-License-Identifier: MIT */
/*
 * A forked child destroys its copy of the parent's cache (allowed: it
 * frees only the child's copy of the memory), creates a cache of its own
 * and unmaps cached memory.  The child's monitor must report only to the
 * child's own caches: the uffd monitor's list of caches still named the
 * parent's copy, freed by the destroy, and the child's handler thread
 * reported the unmap into it (issue 25 item 8: SIGSEGV under ASan in the
 * cache's index walk, silent corruption without it).  Under uffd and
 * hooks in this program (which links libmrcache-hooks, whose own fork
 * handler hid the bug), then with plain uffd in hooks-link-none
 * (tests/hooks-link-prog.c, "fork-uffd"), where the child crashed with
 * SIGSEGV.  The child's own cache must still see the unmap.  Needs
 * MRC_TEST_BUILD (set by tests/run.sh).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define LEN (64ul << 10)

static int get_put(struct mrcache *c, char *p)
{
	struct mrcache_region *r;
	int rc = mrcache_get(c, p, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);

	if (rc)
		return rc;
	return mrcache_put(c, r);
}

static int child(enum mrcache_monitor_kind m, struct mrcache *parent_copy, char *shared)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;
	char *p;

	CHECK_EQ(mrcache_destroy(parent_copy), 0);
	/* Reuse the freed copy's memory, as any allocation may. */
	for (int i = 0; i < 64; i++)
		memset(malloc(4096), 0xa5, 4096);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	if (mrcache_create(&cfg, &c))
		return 77;
	for (int i = 0; i < 32; i++) {
		p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(p, 1, LEN);
		CHECK_EQ(get_put(c, p), 0);
		CHECK_EQ(munmap(p, LEN), 0);
		CHECK_EQ(munmap(shared + (i % 4) * LEN, LEN), 0);	/* the parent's cached range */
		shared = mmap(shared, 4 * LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		for (int t = 0; t < 100; t++) {
			mrcache_progress(c);
			mrcache_stats_get(c, &st);
			if (st.invalidations[MRCACHE_CAUSE_UNMAP] > (uint64_t)i)
				break;
			usleep(1000);
		}
	}
	mrcache_stats_get(c, &st);
	CHECK_EQ(st.invalidations[MRCACHE_CAUSE_UNMAP], 32);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(tb.regs, tb.deregs);
	return test_result();
}

static int one(enum mrcache_monitor_kind m)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int status = 0;
	char *shared;
	pid_t pid;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	if (mrcache_create(&cfg, &c))
		return 77;
	shared = mmap(NULL, 4 * LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(shared, 1, 4 * LEN);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(get_put(c, shared + i * LEN), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(m, c, shared));
	waitpid(pid, &status, 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
		return 77;
	printf("  %-5s child: %s %d\n", mrcache_monitor_name(m),
	       WIFEXITED(status) ? "exit" : "signal",
	       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return test_result();
}

/* TSan cannot follow a child that starts threads after a fork of a
 * threaded process (the parent has the uffd handler thread): it dies with
 * "starting new threads after multi-threaded fork is not supported". */
#if defined(__SANITIZE_THREAD__)
#define TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSAN_BUILD 1
#endif
#endif

int main(void)
{
#ifdef TSAN_BUILD
	SKIP("ThreadSanitizer does not support threads started after a fork of a threaded process");
#endif
	static const enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_UFFD, MRCACHE_MONITOR_HOOKS,
	};
	int ran = 0, failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++) {
		int status = 0, rc;
		pid_t pid = fork();

		if (pid == 0)
			_exit(one(monitors[i]));
		waitpid(pid, &status, 0);
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		if (rc == 77) {
			printf("  %-5s cannot start here\n", mrcache_monitor_name(monitors[i]));
			continue;
		}
		ran++;
		failed += rc != 0;
	}
	if (!ran)
		SKIP("neither uffd nor hooks starts here");
	{
		const char *build = getenv("MRC_TEST_BUILD");
		char cmd[4096], out[256] = "";
		FILE *f;

		snprintf(cmd, sizeof(cmd), "%s/tests/hooks-link-none fork-uffd 2>&1",
			 build ? build : "build");
		f = popen(cmd, "r");
		if (f) {
			if (!fgets(out, sizeof(out), f))
				out[0] = 0;
			pclose(f);
		}
		printf("  plain uffd: %s", out);
		CHECK(f && (!strcmp(out, "child exit 0\n") || !strcmp(out, "uffd cannot start\n")));
	}
	return failed || test_failures ? 1 : 0;
}
