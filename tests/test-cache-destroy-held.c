/* SPDX-License-Identifier: MIT */
/*
 * mrcache_destroy() while the application still holds a region that was
 * invalidated (by mrcache_invalidate, or by munmap under a real monitor):
 * the region is out of the cache's index and LRU but not deregistered
 * until its last put.  destroy must return -EBUSY and leave the cache
 * usable; after the put, destroy succeeds, and every registration is
 * deregistered exactly once (issue 25 item 9: destroy returned 0, the
 * put then touched freed memory and the registration leaked).  Under
 * every monitor that starts here, each in a child process.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define LEN (64ul << 10)

enum how { BY_INVALIDATE, BY_MUNMAP };

static int one(enum mrcache_monitor_kind m, enum how how)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_region *r;
	struct mrcache *c;
	char *p;
	int rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	if (mrcache_create(&cfg, &c))
		return 77;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	memset(p, 1, LEN);
	CHECK_EQ(mrcache_get(c, p, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r), 0);
	if (how == BY_INVALIDATE)
		CHECK_EQ(mrcache_invalidate(c, p, LEN), 1);
	else
		CHECK_EQ(munmap(p, LEN), 0);
	/* Let the monitor report it (uffd reports from a thread). */
	for (int i = 0; i < 100 && how == BY_MUNMAP; i++) {
		struct mrcache_stats st;

		mrcache_progress(c);
		mrcache_stats_get(c, &st);
		if (st.invalidations[MRCACHE_CAUSE_UNMAP])
			break;
		usleep(1000);
	}
	rc = mrcache_destroy(c);
	CHECK_EQ(rc, -EBUSY);
	if (rc == 0) {
		printf("  %-6s %s: destroy returned 0 with a region held (%llu regs, %llu deregs)\n",
		       mrcache_monitor_name(m), how == BY_INVALIDATE ? "invalidate" : "munmap",
		       (unsigned long long)tb.regs, (unsigned long long)tb.deregs);
		return 1;
	}
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	printf("  %-6s %s: %llu regs, %llu deregs, %llu bad\n", mrcache_monitor_name(m),
	       how == BY_INVALIDATE ? "invalidate" : "munmap",
	       (unsigned long long)tb.regs, (unsigned long long)tb.deregs,
	       (unsigned long long)tb.bad_deregs);
	CHECK_EQ(tb.regs, tb.deregs);
	CHECK_EQ(tb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	if (how == BY_INVALIDATE)
		munmap(p, LEN);
	return test_result();
}

static int in_child(enum mrcache_monitor_kind m, enum how how)
{
	int status = 0;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(one(m, how));
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(void)
{
	static const enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_BPF,
		MRCACHE_MONITOR_UFFD, MRCACHE_MONITOR_HOOKS,
	};
	int failed = 0, ran = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++) {
		for (int how = BY_INVALIDATE; how <= BY_MUNMAP; how++) {
			int rc;

			if (how == BY_MUNMAP && monitors[i] == MRCACHE_MONITOR_NONE)
				continue;	/* nothing would see it */
			rc = in_child(monitors[i], how);
			if (rc == 77) {
				printf("  %-6s cannot start here\n", mrcache_monitor_name(monitors[i]));
				break;
			}
			ran++;
			failed += rc != 0;
		}
	}
	if (!ran)
		SKIP("no monitor starts here");
	return failed ? 1 : 0;
}
