/* SPDX-License-Identifier: MIT */
/* munmap by a raw system call, bypassing libc, and by a clone(CLONE_VM)
 * child (another process sharing the address space), and raw madvise
 * DONTNEED and MADV_GUARD_INSTALL (then GUARD_REMOVE: fresh zero pages):
 * interposing monitors never see these; the kernel-side ones must. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"

#define LEN (64 * 1024)

/* ThreadSanitizer cannot follow a thread it did not create through
 * pthread_create: the clone(CLONE_VM) case is left out under it. */
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

static int prepare(struct guarantee_ctx *c)
{
	c->len = LEN;
	c->addr = guarantee_map(NULL, LEN, 0);
	return c->addr ? 0 : -errno;
}

static int apply_whole(struct guarantee_ctx *c)
{
	if (syscall(SYS_munmap, c->addr, c->len))
		return -errno;
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static int apply_raw_madvise(struct guarantee_ctx *c)
{
	return syscall(SYS_madvise, c->addr, c->len, MADV_DONTNEED) ? -errno : 0;
}

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif

static int apply_raw_guard(struct guarantee_ctx *c)
{
	if (syscall(SYS_madvise, c->addr, c->len, MADV_GUARD_INSTALL)) {
		if (errno != EINVAL)
			return -errno;
		snprintf(c->why, sizeof(c->why), "no MADV_GUARD_INSTALL here (Linux 6.13+)");
		return GUARANTEE_SKIP;
	}
	return syscall(SYS_madvise, c->addr, c->len, MADV_GUARD_REMOVE) ? -errno : 0;
}

static int child_munmap(void *arg)
{
	struct guarantee_ctx *c = arg;

	return syscall(SYS_munmap, c->addr, c->len) ? 1 : 0;
}

static int apply_clone_vm(struct guarantee_ctx *c)
{
	size_t stack_len = 64 * 1024;
	char *stack = malloc(stack_len);
	int status = 0;
	pid_t pid;

	if (UNDER_TSAN) {
		free(stack);
		snprintf(c->why, sizeof(c->why), "ThreadSanitizer cannot run a clone(CLONE_VM) child");
		return GUARANTEE_SKIP;
	}
	if (!stack)
		return -ENOMEM;
	pid = clone(child_munmap, stack + stack_len, CLONE_VM | SIGCHLD, c);
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		free(stack);
		return -errno;
	}
	free(stack);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "raw-munmap", prepare, apply_whole, release, NULL },
		{ "raw-madv-dontneed", prepare, apply_raw_madvise, release, NULL },
		{ "raw-madv-guard", prepare, apply_raw_guard, release, NULL },
		{ "clone-vm-munmap", prepare, apply_clone_vm, release, NULL },
	};

	bpf_test_pick_monitor();
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
