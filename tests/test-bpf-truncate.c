/* SPDX-License-Identifier: MIT */
/* Truncation and hole punching of a shared file mapping by another
 * process: no call in this process unmaps anything, so only a kernel-side
 * monitor can notice.  Afterwards the file is extended again and the
 * mapping faults in fresh pages at the same addresses.  And truncation of
 * a private mapping of the file, by this process and by another: the
 * kernel's truncate zaps the private (copied on write, pinned) pages too,
 * which the page cache's deletions do not show. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"

#define LEN (64 * 1024)
#define PAGE 4096

struct file_map {
	int fd;
};

static int prepare_map(struct guarantee_ctx *c, int flags)
{
	static struct file_map fm;
	void *p;

	fm.fd = memfd_create("mrc-bpf-truncate", MFD_CLOEXEC);
	if (fm.fd < 0 || ftruncate(fm.fd, LEN))
		return -errno;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, flags, fm.fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	c->addr = p;
	c->len = LEN;
	c->aux = &fm;
	return 0;
}

static int prepare(struct guarantee_ctx *c)
{
	return prepare_map(c, MAP_SHARED);
}

static int prepare_private(struct guarantee_ctx *c)
{
	return prepare_map(c, MAP_PRIVATE);
}

/* Run fn(fd) in a child process and wait for it. */
static int in_child(int fd, int (*fn)(int fd))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(fn(fd) ? 1 : 0);
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

static int truncate_all(int fd)
{
	return ftruncate(fd, 0) || ftruncate(fd, LEN);
}

static int truncate_tail(int fd)
{
	return ftruncate(fd, LEN - 4 * PAGE) || ftruncate(fd, LEN);
}

static int punch_hole(int fd)
{
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 3 * PAGE, 2 * PAGE);
}

static int apply_truncate(struct guarantee_ctx *c)
{
	return in_child(((struct file_map *)c->aux)->fd, truncate_all);
}

static int apply_truncate_tail(struct guarantee_ctx *c)
{
	return in_child(((struct file_map *)c->aux)->fd, truncate_tail);
}

static int apply_punch(struct guarantee_ctx *c)
{
	return in_child(((struct file_map *)c->aux)->fd, punch_hole);
}

static int apply_truncate_own(struct guarantee_ctx *c)
{
	return truncate_all(((struct file_map *)c->aux)->fd) ? -errno : 0;
}

static int apply_truncate_tail_own(struct guarantee_ctx *c)
{
	return truncate_tail(((struct file_map *)c->aux)->fd) ? -errno : 0;
}

static int apply_punch_own(struct guarantee_ctx *c)
{
	return punch_hole(((struct file_map *)c->aux)->fd) ? -errno : 0;
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
	close(((struct file_map *)c->aux)->fd);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "truncate-by-child", prepare, apply_truncate, release, NULL },
		{ "truncate-tail", prepare, apply_truncate_tail, release, NULL },
		{ "punch-hole", prepare, apply_punch, release, NULL },
		{ "private-truncate", prepare_private, apply_truncate_own, release, NULL },
		{ "private-trunc-tail", prepare_private, apply_truncate_tail_own, release, NULL },
		{ "private-by-child", prepare_private, apply_truncate, release, NULL },
		{ "private-punch", prepare_private, apply_punch_own, release,
		  "a hole punch leaves the private copies, pinned or not" },
	};

	bpf_test_pick_monitor();
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
