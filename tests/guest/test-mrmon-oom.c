/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-oom: finding 2 of issue 24 (the OOM reaper soft-locked) stays
 * fixed: reaping the address space of a killed watcher costs the module a
 * bounded amount of work, however many watches overlap its VMAs.
 *
 * The attacker, uid 65534 with default limits and oom_score_adj 1000, in
 * a memory cgroup of its own: 2,000 one-page anonymous VMAs (alternating
 * protections keep them apart), a one-page watch of each, then as many
 * watches covering all of them as the module grants.  It then allocates
 * until the memory cgroup's OOM killer kills it.  __oom_reap_task_mm()
 * issues one non-blockable invalidation per VMA; on 1dca6a6 (one interval
 * notifier per watch) each called every overlapping watch.
 *
 * The reaper runs only if the mm outlives the victim (OOM_REAPER_DELAY,
 * 2 s after the kill; a victim that exits in time tears its mm down
 * itself, in one invalidation).  So the test holds it, as a victim stuck
 * in the kernel would: it keeps a reference on the mm (a process_vm_readv()
 * from the victim into a userfaultfd page nobody resolves yet) and the
 * victim's /dev/mrmon descriptor (sent over SCM_RIGHTS), so the watches
 * are still there when the reaper comes.
 *
 * Figure: from the kill ("Killed process PID") to the end of the reap
 * ("oom_reaper: reaped process PID"), kernel-log timestamps; at most twice
 * its control (the same with the descriptor open and no watch) plus 50 ms.
 * The OOM report the kill prints ("Call Trace:") is expected: the test
 * brackets it with "mrcache-expect: oom-kill begin|end" in the kernel log,
 * and run.sh exempts the lines of an OOM report inside those brackets
 * only; a soft lockup, RCU stall or hung task still fails the run.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "mrmon_priv.h"
#include "mrmon_test.h"

#define VMAS 2000
#define MAX_WATCHES 65536
#define REAP_WAIT_S 240.0

static char cg[256];

struct victim_info {
	uintptr_t page;		/* a page of the victim, for the hold */
	int watches;
};

static char *layout(void)
{
	char *p = mmap(NULL, VMAS * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	for (int i = 0; i < VMAS; i++)
		p[i * PAGE] = 1;
	for (int i = 1; i < VMAS; i += 2)
		if (mprotect(p + i * PAGE, PAGE, PROT_READ))
			return NULL;
	return p;
}

/* WATCH `count` copies of [p, p + len) in batches; returns how many were
 * granted (stops at the first refusal). */
static int watch_many(struct mon *m, char *p, size_t len, size_t step, int count)
{
	static struct mrmon_range r[1024];
	int n = 0, rc = 0;

	while (n < count && !rc) {
		struct mrmon_batch b = { .entries = (uintptr_t)r };

		b.count = m->hs.max_batch < 1024 ? m->hs.max_batch : 1024;
		if (b.count > (uint32_t)(count - n))
			b.count = (uint32_t)(count - n);
		for (uint32_t i = 0; i < b.count; i++)
			r[i] = (struct mrmon_range){ .start = (uintptr_t)p + (n + i) * step % (VMAS * PAGE),
						     .len = len };
		rc = mon_ioctl(m->fd, MRMON_IOC_WATCH, &b);
		n += (int)b.done;
		if (b.done < b.count)
			break;
	}
	return n;
}

static int send_fd(int sock, int fd, const struct victim_info *vi)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (void *)vi, sizeof(*vi) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == sizeof(*vi) ? 0 : -errno;
}

static int recv_fd(int sock, struct victim_info *vi)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { vi, sizeof(*vi) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != sizeof(*vi))
		return -EIO;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EIO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* The victim: set up, hand the descriptor over, then allocate until
 * killed.  Returns only on failure (the exit code). */
static int victim(int sock, int watched)
{
	struct victim_info vi = { 0 };
	struct mon m;
	char *p, go;

	if (priv_memcg_enter(cg) || priv_write("/proc/self/oom_score_adj", "1000\n") ||
	    priv_become(PRIV_NOBODY))
		return 2;
	p = layout();
	if (!p || mon_open(&m, 65536, 64))
		return 3;
	if (watched) {
		vi.watches = watch_many(&m, p, PAGE, PAGE, VMAS);
		vi.watches += watch_many(&m, p, VMAS * PAGE, 0, MAX_WATCHES - vi.watches);
	}
	vi.page = (uintptr_t)p;
	if (send_fd(sock, m.fd, &vi) || read(sock, &go, 1) != 1)
		return 4;
	for (size_t i = 0; i < 4096; i++) {	/* 4 GiB: far past memory.max */
		char *q = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (q == MAP_FAILED)
			return 5;
		memset(q, 1, 1 << 20);
	}
	return 6;		/* never killed */
}

/* A reference on the victim's mm, held in the kernel: process_vm_readv()
 * pins a page of the victim and takes the mm, then sleeps copying it into
 * a userfaultfd page until the test resolves the fault. */
struct hold {
	pid_t pid;
	uintptr_t remote;
	char *local;
	int uffd;
	ssize_t got;
	pthread_t thread;
};

static void *hold_thread(void *arg)
{
	struct hold *h = arg;
	struct iovec l = { h->local, PAGE }, r = { (void *)h->remote, PAGE };

	h->got = process_vm_readv(h->pid, &l, 1, &r, 1, 0);
	return NULL;
}

static int hold_start(struct hold *h)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffd_msg msg;
	struct pollfd pfd;

	h->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (h->uffd < 0 || ioctl(h->uffd, UFFDIO_API, &api))
		return -errno;
	h->local = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h->local == MAP_FAILED)
		return -errno;
	reg = (struct uffdio_register){ .range = { (uintptr_t)h->local, PAGE },
					.mode = UFFDIO_REGISTER_MODE_MISSING };
	if (ioctl(h->uffd, UFFDIO_REGISTER, &reg) ||
	    pthread_create(&h->thread, NULL, hold_thread, h))
		return -errno;
	pfd = (struct pollfd){ .fd = h->uffd, .events = POLLIN };
	if (poll(&pfd, 1, 10000) != 1 || read(h->uffd, &msg, sizeof(msg)) != sizeof(msg))
		return -ETIMEDOUT;	/* the thread is now asleep in the copy */
	return 0;
}

static void hold_end(struct hold *h)
{
	struct uffdio_zeropage z = { .range = { (uintptr_t)h->local, PAGE } };

	CHECK_EQ(ioctl(h->uffd, UFFDIO_ZEROPAGE, &z), 0);
	pthread_join(h->thread, NULL);
	CHECK_EQ(h->got, (ssize_t)PAGE);
	munmap(h->local, PAGE);
	close(h->uffd);
}

/* The kernel-log timestamp (seconds) of the first record containing
 * `needle`, read from `fd` on; waits up to `seconds`.  -1 if none. */
static double kmsg_when(int fd, const char *needle, const char *or_needle, double seconds)
{
	double t0 = priv_now();
	char rec[8192];
	ssize_t n;

	while (priv_now() - t0 < seconds) {
		unsigned long long usec;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EAGAIN) {
			usleep(20000);
			continue;
		}
		if (n <= 0)
			continue;	/* EPIPE: overwritten records */
		rec[n] = 0;
		if (!strstr(rec, needle) && !(or_needle && strstr(rec, or_needle)))
			continue;
		printf("kernel log: %s", strchr(rec, ';') ? strchr(rec, ';') + 1 : rec);
		if (sscanf(rec, "%*u,%*u,%llu", &usec) != 1 || strstr(rec, "unable to reap"))
			return -1;
		return usec / 1e6;
	}
	return -1;
}

/* One kill and reap; returns the seconds from the kill to the reap's end,
 * or -1. */
static double kill_and_reap(int watched)
{
	char killed[64], reaped[64], unable[64], max[32];
	struct victim_info vi;
	struct hold h = { 0 };
	double t_kill, t_reap;
	int sv[2], status, monfd, kmsg;
	pid_t pid;

	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		close(sv[0]);
		_exit(victim(sv[1], watched));
	}
	close(sv[1]);
	monfd = recv_fd(sv[0], &vi);
	if (monfd < 0) {
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		printf("victim failed before the kill: exit %d\n",
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		CHECK(0);
		return -1;
	}
	snprintf(max, sizeof(max), "%ld\n", priv_memcg_current(cg) + (32l << 20));
	CHECK_EQ(priv_write_in(cg, "memory.max", max), 0);
	h.pid = pid;
	h.remote = vi.page;
	CHECK_EQ(hold_start(&h), 0);

	kmsg = priv_kmsg_mark();
	CHECK(kmsg >= 0);
	CHECK_EQ(priv_write("/dev/kmsg", "mrcache-expect: oom-kill begin\n"), 0);
	CHECK_EQ(write(sv[0], "g", 1), 1);
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	snprintf(killed, sizeof(killed), "Killed process %d ", (int)pid);
	snprintf(reaped, sizeof(reaped), "oom_reaper: reaped process %d ", (int)pid);
	snprintf(unable, sizeof(unable), "oom_reaper: unable to reap pid:%d ", (int)pid);
	t_kill = kmsg_when(kmsg, killed, NULL, 30.0);
	t_reap = t_kill < 0 ? -1 : kmsg_when(kmsg, reaped, unable, REAP_WAIT_S);
	CHECK_EQ(priv_write("/dev/kmsg", "mrcache-expect: oom-kill end\n"), 0);
	hold_end(&h);
	close(monfd);
	close(kmsg);
	close(sv[0]);
	CHECK_EQ(priv_write_in(cg, "memory.max", "max\n"), 0);
	printf("%s: %d watches over %d VMAs; killed at %.3f s, reaped %.3f s later\n",
	       watched ? "watched" : "control", vi.watches, VMAS, t_kill,
	       t_kill >= 0 && t_reap >= 0 ? t_reap - t_kill : -1.0);
	CHECK(t_kill >= 0);
	CHECK(t_reap >= 0);
	return t_kill >= 0 && t_reap >= 0 ? t_reap - t_kill : -1;
}

int main(void)
{
	double t_ctl, t;
	int rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	if (geteuid())
		SKIP("needs root (memory cgroup, uid 65534, the hold on the mm)");
	rc = priv_memcg_make("mrmon-oom", cg, sizeof(cg));
	if (rc)
		SKIP("no cgroup v2 memory controller: %s", strerror(-rc));
	priv_write_in(cg, "memory.swap.max", "0\n");
	t_ctl = kill_and_reap(0);
	t = kill_and_reap(1);
	printf("reap after the kill: %.3f s with watches, %.3f s without (control); "
	       "bound %.3f s\n", t, t_ctl, 2 * t_ctl + 0.050);
	CHECK(t_ctl >= 0);
	CHECK(t >= 0 && t <= 2 * t_ctl + 0.050);
	rmdir(cg);
	return test_result();
}
