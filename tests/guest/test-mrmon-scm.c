/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-scm: a descriptor passed over a Unix socket (SCM_RIGHTS) to
 * another process, here running as an unprivileged user, gives that process
 * nothing: WATCH, UNWATCH, HANDSHAKE and SETUP fail with EPERM, read()
 * fails with EPERM (and takes no event), poll() reports POLLERR, mmap()
 * shared or private fails with EPERM; the sender's queued event, watch
 * and word are as they were.  Control: the same calls from the sender
 * succeed, so the receiver's EPERM is the owner check and not bad
 * arguments.
 */
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include "mrmon_test.h"

static int send_fd(int sock, int fd)
{
	char data = 'f';
	struct iovec iov = { &data, 1 };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = { &data, 1 };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -errno;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EBADMSG;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* Every call the receiver can make; want is the errno each must give
 * (0 for the sender's control run). */
static void try_all(int fd, size_t map_size, int want, const char *who)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_setup su = { .nslots = 4, .nevents = 4 };
	char *own = mon_map_anon(PAGE);
	struct mrmon_range r = { .start = (uintptr_t)own, .len = PAGE };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	struct mrmon_unwatch_entry u;
	struct mrmon_event ev;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	void *p;
	int rc;

	printf("%s: calls must give %s\n", who, want ? strerror(want) : "success");
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), -want);
	if (want)	/* the sender is set up already: EBUSY is its answer */
		CHECK_EQ(mon_ioctl(fd, MRMON_IOC_SETUP, &su), -want);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_WATCH, &b), -want);
	u = (struct mrmon_unwatch_entry){ .slot = r.slot, .expected = r.expected };
	b = (struct mrmon_batch){ .entries = (uintptr_t)&u, .count = 1 };
	if (want)	/* the sender's own watch, by guessing slot 0, gen 1 */
		u = (struct mrmon_unwatch_entry){ .slot = 0, .expected = 3 };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_UNWATCH, &b), -want);
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK(want ? (pfd.revents & POLLERR) : (pfd.revents & POLLIN));
	rc = read(fd, &ev, sizeof(ev)) < 0 ? -errno : 0;
	CHECK_EQ(rc, -want);
	p = mmap(NULL, map_size, PROT_READ, MAP_SHARED, fd, 0);
	CHECK_EQ(p == MAP_FAILED ? -errno : 0, -want);
	if (p != MAP_FAILED)
		munmap(p, map_size);
	p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	CHECK_EQ(p == MAP_FAILED ? -errno : 0, -want);
	if (p != MAP_FAILED)
		munmap(p, PAGE);
	munmap(own, PAGE);
}

static int receiver(int sock)
{
	int fd;

	/* An unrelated, unprivileged process: nobody. */
	CHECK_EQ(setgid(65534), 0);
	CHECK_EQ(setuid(65534), 0);
	fd = recv_fd(sock);
	CHECK(fd >= 0);
	if (fd >= 0) {
		/* 16 slots: a header page and a page of words. */
		try_all(fd, 2 * PAGE, EPERM, "receiver (uid 65534)");
		close(fd);
	}
	CHECK_EQ(write(sock, "d", 1), 1);
	return test_result();
}

int main(void)
{
	struct mon m;
	int sv[2], status;
	uint32_t slot;
	uint64_t expected;
	char *p, *gone, c;
	struct mrmon_event ev;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	/* The receiver exists before the descriptor does: it inherits
	 * nothing from the sender but what the socket carries. */
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(receiver(sv[1]));
	}
	close(sv[1]);
	CHECK_EQ(mon_open(&m, 16, 16), 0);
	p = mon_map_anon(PAGE);
	gone = mon_map_anon(PAGE);
	CHECK_EQ(mon_watch(&m, p, PAGE, 11, &slot, &expected), 0);
	CHECK_EQ(slot, 0);
	CHECK_EQ(expected, 3);	/* what the receiver guesses */
	uint32_t s2;
	uint64_t e2;

	CHECK_EQ(mon_watch(&m, gone, PAGE, 22, &s2, &e2), 0);
	munmap(gone, PAGE);	/* one event queued */
	CHECK_EQ(m.hdr->pending, 1);

	CHECK_EQ(send_fd(sv[0], m.fd), 0);
	CHECK_EQ(read(sv[0], &c, 1), 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));

	/* The sender's state is untouched. */
	CHECK(mon_valid(&m, slot, expected));
	CHECK_EQ(m.hdr->pending, 1);
	CHECK_EQ(mon_events(&m, &ev, 1), 1);
	CHECK_EQ(ev.cookie, 22);
	CHECK_EQ(ev.cause, MRMON_CAUSE_UNMAP);
	CHECK_EQ(mon_unwatch(&m, slot, expected), 0);

	/* Control: the same calls from the owner work (one event queued
	 * again for its read and poll). */
	CHECK_EQ(mon_watch(&m, p, PAGE, 33, &slot, &expected), 0);
	madvise(p, PAGE, MADV_DONTNEED);
	try_all(m.fd, m.map_size, 0, "sender (control)");
	mon_close(&m);
	return test_result();
}
