/* SPDX-License-Identifier: MIT */
/*
 * A hugetlb file (memfd, MFD_HUGETLB) of two huge pages, mapped shared,
 * with a range cached in the second page; another process truncates the
 * file to one page and extends it again.  Only a kernel-side monitor sees
 * it: the bpf monitor's syscall variant through the page-cache deletion
 * tracepoint, whose folio index counted huge pages before Linux 6.7 and
 * was read as base pages (issue 25 item 3: the deletion invalidated
 * [4 KiB, 2 MiB + 4 KiB), not the second page, and the cached range hit
 * stale in the 6.1 guest).  The 6.1 guest's bpf suite runs it under the
 * syscall variant.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"
#include "hugetlb.h"

#define TEST_LEN (64 * 1024)

static size_t huge;
static int fd = -1;

static int prepare(struct guarantee_ctx *c)
{
	fd = memfd_create("mrc-bpf-hugetlb-truncate", MFD_CLOEXEC | MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, (off_t)(2 * huge))) {
		snprintf(c->why, sizeof(c->why), "hugetlb memfd: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return GUARANTEE_SKIP;
	}
	c->aux_len = 2 * huge;
	c->aux = mmap(NULL, c->aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->aux == MAP_FAILED) {
		snprintf(c->why, sizeof(c->why), "mmap: %s", strerror(errno));
		close(fd);
		return GUARANTEE_SKIP;
	}
	memset(c->aux, 1, c->aux_len);
	c->addr = (char *)c->aux + huge + huge / 2;
	c->len = TEST_LEN;
	return 0;
}

/* Another process deletes the second huge page from the file. */
static int apply(struct guarantee_ctx *c)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(ftruncate(fd, (off_t)huge) || ftruncate(fd, (off_t)(2 * huge)) ? 1 : 0);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->aux, c->aux_len);
	close(fd);
	fd = -1;
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "hugetlb-truncate-by-child", prepare, apply, release, NULL },
	};
	char why[160];

	bpf_test_pick_monitor();
	huge = test_hugetlb_reserve(4, why, sizeof(why));
	if (!huge) {
		printf("SKIP: no huge page: %s\n", why);
		return 77;
	}
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
