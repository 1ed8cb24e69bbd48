/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-fork: after fork, the parent's watches on pinned memory stay
 * valid (fork write-protects, PROTECTION_PAGE, and copies pinned pages for
 * the child), the parent's monitor keeps working, and every call the child
 * makes on the inherited descriptor fails with -EPERM without touching
 * either address space; the child has no copy of the shared map.
 * Negative control: an unpinned watched page the parent writes while the
 * child lives is copied (COW) and its word goes invalid.
 */
#include <liburing.h>
#include <poll.h>
#include <sys/wait.h>
#include "mrmon_test.h"

static int child(struct mon *m, char *pinned)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_setup su = { .nslots = 4, .nevents = 4 };
	struct mrmon_range r = { .start = (uintptr_t)pinned, .len = PAGE };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	struct pollfd pfd = { .fd = m->fd, .events = POLLIN };
	struct mrmon_event ev;
	unsigned char vec;

	CHECK_EQ(mon_ioctl(m->fd, MRMON_IOC_HANDSHAKE, &hs), -EPERM);
	CHECK_EQ(mon_ioctl(m->fd, MRMON_IOC_SETUP, &su), -EPERM);
	CHECK_EQ(mon_ioctl(m->fd, MRMON_IOC_WATCH, &b), -EPERM);
	CHECK_EQ(mon_ioctl(m->fd, MRMON_IOC_UNWATCH, &b), -EPERM);
	CHECK(read(m->fd, &ev, sizeof(ev)) < 0 && errno == EPERM);
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_SHARED, m->fd, 0) == MAP_FAILED && errno == EPERM);
	CHECK(poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLERR));
	/* VM_DONTCOPY: the map is not there. */
	CHECK(mincore(m->map, PAGE, &vec) < 0 && errno == ENOMEM);
	/* The child's own copy of the pinned page is its own business. */
	pinned[0] = 9;
	munmap(pinned, PAGE);
	close(m->fd);
	return test_result();
}

int main(void)
{
	struct io_uring ring;
	struct iovec iov;
	struct mon m;
	uint32_t sp = 0, su = 0;
	uint64_t ep = 0, eu = 0;
	char *pinned, *unpinned;
	int fds[2], status;
	pid_t pid;

	CHECK_EQ(mon_open(&m, 16, 16), 0);
	pinned = mon_map_anon(PAGE);
	unpinned = mon_map_anon(PAGE);
	madvise(pinned, PAGE, MADV_NOHUGEPAGE);
	madvise(unpinned, PAGE, MADV_NOHUGEPAGE);
	if (io_uring_queue_init(4, &ring, 0))
		SKIP("io_uring unavailable");
	iov = (struct iovec){ pinned, PAGE };
	CHECK_EQ(io_uring_register_buffers(&ring, &iov, 1), 0);
	CHECK_EQ(mon_watch(&m, pinned, PAGE, 1, &sp, &ep), 0);
	CHECK_EQ(mon_watch(&m, unpinned, PAGE, 2, &su, &eu), 0);

	CHECK_EQ(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		char c;
		int rc = child(&m, pinned);

		close(fds[1]);
		if (read(fds[0], &c, 1) < 0)
			rc = 1;
		_exit(rc);
	}
	close(fds[0]);
	CHECK(mon_valid(&m, sp, ep));
	CHECK(mon_valid(&m, su, eu));
	pinned[0] = 1;			/* no COW: the child got a copy */
	unpinned[0] = 1;		/* COW while the child lives */
	CHECK(mon_valid(&m, sp, ep));
	CHECK(!mon_valid(&m, su, eu));	/* the control */
	close(fds[1]);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* The parent's monitor still works, the child's close changed
	 * nothing. */
	CHECK(mon_valid(&m, sp, ep));
	munmap(pinned, PAGE);
	CHECK(!mon_valid(&m, sp, ep));
	/* Both invalidated, so both gone (ABI 3). */
	CHECK_EQ(mon_unwatch(&m, sp, ep), -ESTALE);
	CHECK_EQ(mon_unwatch(&m, su, eu), -ESTALE);
	io_uring_queue_exit(&ring);
	munmap(unpinned, PAGE);
	mon_close(&m);
	return test_result();
}
