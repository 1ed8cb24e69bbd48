/* SPDX-License-Identifier: MIT */
/*
 * fork: a child never uses a parent registration.  Every call on a cache
 * the parent created returns -ECHILD in the child (even one that would
 * hit), destroy there frees memory without deregistering the parent's
 * registrations, and a new cache in the child works.  The parent's cache
 * is untouched.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

static int child(struct mrcache *parent_cache, struct test_backend *tb, char *buf)
{
	struct mrcache_region *r;
	struct mrcache_config cfg;
	struct mrcache *mine;
	uint64_t deregs = tb->deregs;

	CHECK_EQ(mrcache_get(parent_cache, buf, 4096, 0, &r), -ECHILD);
	CHECK_EQ(mrcache_invalidate(parent_cache, buf, 4096), -ECHILD);
	CHECK_EQ(mrcache_flush(parent_cache), -ECHILD);
	CHECK_EQ(mrcache_progress(parent_cache), -ECHILD);
	CHECK_EQ(mrcache_destroy(parent_cache), 0);
	CHECK_EQ(tb->deregs, deregs);
	test_backend_config(tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &mine), 0);
	CHECK_EQ(mrcache_get(mine, buf, 4096, 0, &r), 0);
	CHECK_EQ(mrcache_put(mine, r), 0);
	CHECK_EQ(mrcache_destroy(mine), 0);
	return test_result();
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r, *held;
	char *buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	CHECK_EQ(mrcache_get(c, buf, 4096, 0, &r), 0);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_get(c, buf + 4096, 4096, 0, &held), 0);
	pid = fork();
	if (pid == 0)
		_exit(child(c, &tb, buf));
	CHECK(pid > 0);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The parent still hits its own registration. */
	CHECK_EQ(mrcache_get(c, buf, 4096, 0, &r), 0);
	CHECK_EQ(tb.regs, 2);
	CHECK_EQ(mrcache_put(c, r), 0);
	CHECK_EQ(mrcache_put(c, held), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(tb.live, 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
