/* SPDX-License-Identifier: MIT */
/*
 * Truncation of a private file mapping by io_uring's IORING_OP_FTRUNCATE
 * (Linux 6.9+), issue 25 item 4.  The kernel's truncate zaps the private
 * (copied-on-write, pinned) pages of every mapping of the file; the
 * syscall variant decodes ftruncate(2) at sys_exit, but io_uring runs the
 * truncation in a worker thread that makes no system call.  The file's
 * own pages are evicted before the range is cached (written, synced, then
 * POSIX_FADV_DONTNEED), so no page-cache deletion shows the truncation
 * either: only the private copies go.  The ftruncate(2) case is the same
 * file state truncated by the system call, as a control of the setup.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"

#define LEN (64 * 1024)
#define OP_FTRUNCATE 55		/* IORING_OP_FTRUNCATE; liburing 2.3 lacks it */

struct file_map {
	int fd;
};

/* How many of the file's first LEN bytes' pages are in the page cache. */
static int cached_pages(int fd)
{
	unsigned char vec[LEN / 4096];
	void *p = mmap(NULL, LEN, PROT_READ, MAP_SHARED, fd, 0);
	int n = 0;

	if (p == MAP_FAILED)
		return -1;
	if (mincore(p, LEN, vec))
		n = -1;
	for (size_t i = 0; n >= 0 && i < sizeof(vec); i++)
		n += vec[i] & 1;
	munmap(p, LEN);
	return n;
}

/* A regular file (page-cache pages can be evicted; tmpfs keeps them) whose
 * private mapping holds copies of every page, and whose own pages are not
 * cached. */
static int prepare(struct guarantee_ctx *c)
{
	static struct file_map fm;
	static char buf[LEN];
	char *p;

	fm.fd = open(".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fm.fd < 0) {
		snprintf(c->why, sizeof(c->why), "O_TMPFILE here: %s", strerror(errno));
		return GUARANTEE_SKIP;
	}
	memset(buf, 0x5a, sizeof(buf));
	if (write(fm.fd, buf, LEN) != LEN || fsync(fm.fd))
		return -errno;
	p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, fm.fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	for (size_t i = 0; i < LEN; i += 4096)
		p[i] = 1;	/* copy on write: the mapping no longer maps the file's pages */
	if (posix_fadvise(fm.fd, 0, LEN, POSIX_FADV_DONTNEED))
		return -EIO;
	if (cached_pages(fm.fd)) {
		snprintf(c->why, sizeof(c->why), "the file's pages stay cached here (tmpfs?)");
		return GUARANTEE_SKIP;
	}
	c->addr = p;
	c->len = LEN;
	c->aux = &fm;
	return 0;
}

/* ftruncate(fd, len) through io_uring; 77 when this kernel lacks the op. */
static int uring_ftruncate(struct guarantee_ctx *c, int fd, off_t len)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret = io_uring_queue_init(2, &ring, 0);

	if (ret)
		return ret;
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_rw(OP_FTRUNCATE, sqe, fd, NULL, 0, (__u64)len);
	ret = io_uring_submit(&ring);
	if (ret == 1)
		ret = io_uring_wait_cqe(&ring, &cqe);
	else if (ret >= 0)
		ret = -EIO;
	if (!ret) {
		ret = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	if (ret == -EINVAL || ret == -EOPNOTSUPP) {
		snprintf(c->why, sizeof(c->why), "IORING_OP_FTRUNCATE: %s (Linux 6.9+)",
			 strerror(-ret));
		return GUARANTEE_SKIP;
	}
	return ret;
}

static int apply_uring(struct guarantee_ctx *c)
{
	int fd = ((struct file_map *)c->aux)->fd, ret = uring_ftruncate(c, fd, 0);

	return ret ? ret : uring_ftruncate(c, fd, LEN);
}

static int apply_syscall(struct guarantee_ctx *c)
{
	int fd = ((struct file_map *)c->aux)->fd;

	return ftruncate(fd, 0) || ftruncate(fd, LEN) ? -errno : 0;
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
	close(((struct file_map *)c->aux)->fd);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "private-uring-ftruncate", prepare, apply_uring, release, NULL },
		{ "private-ftruncate", prepare, apply_syscall, release, NULL },
	};

	bpf_test_pick_monitor();
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
