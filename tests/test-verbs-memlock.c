/* SPDX-License-Identifier: MIT */
/*
 * RLIMIT_MEMLOCK on a real device (skips on a host without one): without
 * CAP_IPC_LOCK the kernel refuses to pin beyond the limit and ibv_reg_mr
 * fails with ENOMEM.  Through the cache that is a resource error: unused
 * cached regions are evicted and the registration is retried, so the get
 * succeeds.  Control: the same registration done directly, with the cached
 * regions still pinned, fails with ENOMEM, so the limit really binds.
 * Runs in a child that drops CAP_IPC_LOCK.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "caps.h"
#include "verbs-test.h"

#ifdef MRC_HAVE_VERBS
#define SMALL	(64 * 1024)
#define LARGE	(192 * 1024)
#define LIMIT	(256 * 1024)
#define NSMALL	3

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, len);
	return p;
}

/* Exit 77 when the limit cannot be set up, 0 when every check passed. */
static int child(void)
{
	struct rlimit rl = { LIMIT, LIMIT };
	struct mrcache_config cfg;
	struct mrcache_region *r;
	struct mrcache_stats st;
	struct mrcache *cache;
	struct verbs_test vt;
	struct ibv_mr *mr;
	char *small[NSMALL], *large;

	verbs_test_open(&vt);
	if (test_drop_capability(CAP_IPC_LOCK) || setrlimit(RLIMIT_MEMLOCK, &rl))
		SKIP("cannot drop CAP_IPC_LOCK or set RLIMIT_MEMLOCK");
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.pd = vt.pd;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	CHECK_EQ(mrcache_create(&cfg, &cache), 0);
	if (test_failures)
		return 1;
	for (int i = 0; i < NSMALL; i++) {
		small[i] = map(SMALL);
		CHECK(small[i] != NULL);
		if (!small[i])
			return 1;
		CHECK_EQ(mrcache_get(cache, small[i], SMALL, MRCACHE_ACCESS_REMOTE_WRITE, &r), 0);
		if (test_failures)
			return 1;
		CHECK_EQ(mrcache_put(cache, r), 0);
	}
	large = map(LARGE);
	CHECK(large != NULL);
	if (!large)
		return 1;

	/* Control: 3 x 64 KiB pinned, 192 KiB more is over 256 KiB. */
	errno = 0;
	mr = ibv_reg_mr(vt.pd, large, LARGE, IBV_ACCESS_LOCAL_WRITE);
	printf("direct ibv_reg_mr of %d KiB with %d KiB cached: %s\n", LARGE / 1024,
	       NSMALL * SMALL / 1024, mr ? "registered" : strerror(errno));
	if (mr) {
		ibv_dereg_mr(mr);
		SKIP("the kernel does not charge MRs to RLIMIT_MEMLOCK here");
	}
	CHECK_EQ(errno, ENOMEM);

	CHECK_EQ(mrcache_get(cache, large, LARGE, MRCACHE_ACCESS_REMOTE_WRITE, &r), 0);
	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	printf("through the cache: %llu evictions, %llu failed registrations\n",
	       (unsigned long long)st.evictions, (unsigned long long)st.registration_failures);
	CHECK(st.evictions >= 1);
	CHECK(st.registration_failures >= 1);
	if (!test_failures)
		CHECK_EQ(mrcache_put(cache, r), 0);
	CHECK_EQ(mrcache_destroy(cache), 0);
	verbs_test_close(&vt);
	return test_result();
}

int main(void)
{
	int status;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	pid = fork();
	if (pid == 0)
		_exit(child());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
#else
int main(void)
{
	VERBS_TEST_REQUIRE();
}
#endif
