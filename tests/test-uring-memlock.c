/* SPDX-License-Identifier: MIT */
/*
 * RLIMIT_MEMLOCK: without CAP_IPC_LOCK the kernel charges fixed buffers to
 * the limit; going over it must come back as -ENOMEM, a resource error, so
 * the cache evicts and retries.  Runs in a child that drops CAP_IPC_LOCK.
 * Control: the same registration under a limit that fits succeeds.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend/backend.h"
#include "caps.h"
#include "oracle.h"
#include "testutil.h"

#define SMALL (64 * 1024)
#define LARGE (1024 * 1024)

/* In the child: register LARGE bytes under a memlock limit of `limit`. */
static int child(rlim_t limit)
{
	struct rlimit rl = { limit, limit };
	struct mrcache_config cfg;
	struct mrc_backend *be;
	struct mrc_reg reg;
	struct oracle o;
	void *buf;
	int ret;

	if (test_drop_capability(CAP_IPC_LOCK) || setrlimit(RLIMIT_MEMLOCK, &rl))
		return 77;
	/* The ring records at creation whether to charge the limit. */
	if (oracle_init(&o, 1, SMALL))
		return 77;
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &o.ring;
	cfg.uring_slots = 4;
	if (mrc_backend_open(&cfg, &be))
		return 2;
	buf = mmap(NULL, LARGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 2;
	ret = be->ops->reg(be, buf, LARGE, 0, 0, &reg, NULL);
	printf("limit %lu KiB: reg of %d KiB -> %d\n", (unsigned long)limit / 1024,
	       LARGE / 1024, ret);
	if (!ret)
		be->ops->dereg(be, &reg);
	be->ops->close(be);
	oracle_fini(&o);
	if (ret == 0)
		return 0;
	return ret == -ENOMEM && mrc_backend_resource_error(ret) ? 10 : 11;
}

static int run_child(rlim_t limit)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		fflush(stdout);
		_exit(child(limit));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(void)
{
	int tight, roomy;

	setvbuf(stdout, NULL, _IONBF, 0);
	tight = run_child(SMALL);
	if (tight == 77)
		SKIP("cannot drop CAP_IPC_LOCK or set RLIMIT_MEMLOCK here");
	roomy = run_child(4 * LARGE);
	if (tight == 0 && roomy == 0)
		SKIP("the kernel does not charge io_uring buffers to RLIMIT_MEMLOCK here");
	CHECK_EQ(tight, 10);	/* -ENOMEM, classified as a resource error */
	CHECK_EQ(roomy, 0);	/* control: the limit was the only obstacle */
	return test_result();
}
