/* SPDX-License-Identifier: MIT */
/*
 * A miss with the hooks monitor makes no system call of its own: its
 * watch is a few loads and stores (it once read the 64 MiB window of every
 * watched range with getpid + process_vm_readv, 10x the cost of the rest
 * of a miss).  A child, traced like strace does (PTRACE_SYSCALL), makes N
 * misses on the no-op test backend between two getppid() markers; the
 * parent counts the system calls entered between them.  Negative control:
 * the same count over N getpid() calls between markers must see N.  The
 * bound leaves room for the cache's own allocations (brk, mmap).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define N 1000
#define NO_TRACE 77		/* the child's exit code when it cannot be traced */
#define NO_HOOKS 78		/* ... when the hooks monitor cannot start */

static void marker(void)
{
	syscall(SYS_getppid);
}

static int misses(struct mrcache *c, char *buf, size_t page)
{
	for (int i = 0; i <= N; i++) {
		struct mrcache_region *r;
		int v = mrcache_get(c, buf + 2 * (size_t)i * page, page,
				    MRCACHE_ACCESS_LOCAL_WRITE, &r);

		if (v)
			return v;
		if (mrcache_put(c, r))
			return -EINVAL;
		if (i == 0)	/* the first one opens what the cache needs */
			marker();
	}
	marker();
	return 0;
}

static int child(void)
{
	size_t page = (size_t)getpagesize();
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	char *buf;

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		return NO_TRACE;
	raise(SIGSTOP);
	marker();		/* the control */
	for (int i = 0; i < N; i++)
		syscall(SYS_getpid);
	marker();
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_HOOKS);
	if (mrcache_create(&cfg, &c))
		return NO_HOOKS;
	buf = mmap(NULL, 2 * (N + 1) * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || misses(c, buf, page))
		return 1;
	return mrcache_destroy(c) ? 1 : 0;
}

/* Follow the child to its exit; count[k]: the calls it entered inside the
 * k-th pair of markers. */
/*
 * The clock reads a miss makes to time its registration are the vDSO's,
 * no system call, except where the clocksource has no vDSO path: the QEMU
 * guest boots with tsc=unstable, and there each read enters the kernel
 * (3,004 calls in 1,000 misses on 6.1-rt).  Not the cache's own calls.
 */
static int is_clock(long nr)
{
	return nr == SYS_clock_gettime || nr == SYS_gettimeofday;
}

static int trace(pid_t pid, long count[2])
{
	int status, sig = 0, markers = 0;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);	/* NO_TRACE */
	if (!WIFSTOPPED(status))
		return -1;
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL,
		   (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)))
		return -1;
	for (;;) {
		struct __ptrace_syscall_info info;

		if (ptrace(PTRACE_SYSCALL, pid, NULL, (void *)(long)sig) ||
		    waitpid(pid, &status, 0) != pid)
			return -1;
		if (WIFEXITED(status))
			return WEXITSTATUS(status);
		if (!WIFSTOPPED(status))
			return -1;
		sig = 0;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			sig = WSTOPSIG(status);
			continue;
		}
		if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(info), &info) <= 0)
			return -1;
		if (info.op != PTRACE_SYSCALL_INFO_ENTRY)
			continue;
		if (info.entry.nr == SYS_getppid)
			markers++;
		else if (is_clock(info.entry.nr))
			continue;
		else if (markers % 2 && markers / 2 < 2)
			count[markers / 2]++;
	}
}

int main(void)
{
	long count[2] = { 0, 0 };
	pid_t pid = fork();
	int rc;

	if (pid < 0)
		return 1;
	if (pid == 0)
		_exit(child());
	rc = trace(pid, count);
	if (rc == NO_TRACE)
		SKIP("cannot trace a child with ptrace here");
	if (rc == NO_HOOKS)
		SKIP("monitor hooks cannot start here");
	CHECK_EQ(rc, 0);
	printf("control: %ld system calls in %d getpid() calls\n", count[0], N);
	printf("hooks:   %ld system calls in %d misses\n", count[1], N);
	CHECK(count[0] >= N);
	CHECK(count[1] <= N / 20);
	return test_result();
}
