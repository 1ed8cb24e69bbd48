/* SPDX-License-Identifier: MIT */
/*
 * fork with the kernel monitor: the child must not keep the parent's
 * /dev/mrmon descriptor.  The module refuses every call from the child
 * (another mm), but an inherited descriptor would keep the parent's kernel
 * context, its watches and its charged memory alive for the child's whole
 * life, even after the parent destroyed its cache.  The child lists its
 * descriptors: none may be /dev/mrmon.  Control: the parent, before the
 * fork, must see its own.  Skips where the kernel monitor does not start.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

static int mrmon_fds(void)
{
	char path[300], target[256];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	while (dir && (d = readdir(dir))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += strcmp(target, "/dev/mrmon") == 0;
		}
	}
	if (dir)
		closedir(dir);
	return n;
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int status = 0;
	pid_t pid;

	c = test_backend_cache_or_skip(&tb, &cfg, MRCACHE_MONITOR_KERNEL);
	CHECK_EQ(mrmon_fds(), 1);	/* the control: the parent's is seen */
	pid = fork();
	if (pid == 0)
		_exit(mrmon_fds() == 0 ? 0 : 1);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(mrmon_fds(), 0);
	return test_result();
}
