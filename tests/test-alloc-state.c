/* SPDX-License-Identifier: MIT */
/*
 * mrcache_create() must leave the application's allocator as it found it.
 * glibc raises its mmap threshold (dynamically, up to 32 MiB) when a block
 * it had mmapped and is larger than the threshold is freed: from then on
 * such requests come from the heap and are never given back by munmap.
 * The bpf monitor's start did that (libbpf reading the kernel's BTF, and
 * our own multi-MiB arrays), so a program's 1 MiB buffers came from mmap
 * before a create and from the heap after it, which changed what its
 * unmapping calls do (issue 16: the churn benchmark's bpf peer).
 *
 * For each monitor, in a fresh process: a 1 MiB malloc is mmapped (the
 * chunk's IS_MMAPPED bit, bit 1 of the size word just below the pointer)
 * before mrcache_create, after it, and after mrcache_destroy.  The probes
 * are never freed: freeing one would raise the threshold itself.  A
 * monitor that cannot start here is skipped (the guest's suite adds the
 * kernel monitor).  Control: a 4 MiB block freed by the test itself
 * raises the threshold, and the check must see it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define PROBE (1u << 20)
#define IS_MMAPPED 2ul

/* 1 when a fresh 1 MiB malloc is mmapped; the block is kept. */
static int probe_mmapped(void)
{
	void *p = malloc(PROBE);

	return p && (*(const size_t *)((uintptr_t)p - sizeof(size_t)) & IS_MMAPPED);
}

enum child_exit { CHILD_OK, CHILD_CHANGED, CHILD_UNAVAILABLE, CHILD_BROKEN };

static const char *const stage[] = { "ok", "changed", "unavailable", "broken" };

/* In the child: create and destroy a cache with monitor kind, probing
 * before, between and after. */
static int run_monitor(enum mrcache_monitor_kind kind)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	if (!probe_mmapped())
		return CHILD_BROKEN;	/* the process started with a raised threshold */
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, kind);
	rc = mrcache_create(&cfg, &c);
	if (rc)
		return CHILD_UNAVAILABLE;
	if (!probe_mmapped()) {
		fprintf(stderr, "monitor %s: a 1 MiB malloc came from the heap after mrcache_create\n",
			mrcache_monitor_name(kind));
		return CHILD_CHANGED;
	}
	if (mrcache_destroy(c))
		return CHILD_BROKEN;
	if (!probe_mmapped()) {
		fprintf(stderr, "monitor %s: a 1 MiB malloc came from the heap after mrcache_destroy\n",
			mrcache_monitor_name(kind));
		return CHILD_CHANGED;
	}
	return CHILD_OK;
}

/* The control: the test raises the threshold itself. */
static int run_control(void)
{
	char *big = malloc(4u << 20);

	if (!big || !probe_mmapped())
		return CHILD_BROKEN;
	/* Used, so that the compiler keeps the malloc and the free. */
	__asm__ volatile("" : : "r"(big) : "memory");
	free(big);
	return probe_mmapped() ? CHILD_OK : CHILD_CHANGED;
}

static int in_child(int (*fn)(enum mrcache_monitor_kind), enum mrcache_monitor_kind kind)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* The environment would override the monitor asked for. */
		unsetenv("MRCACHE_MONITOR");
		_exit(fn ? fn(kind) : run_control());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return CHILD_BROKEN;
	return WEXITSTATUS(status) <= CHILD_BROKEN ? WEXITSTATUS(status) : CHILD_BROKEN;
}

int main(void)
{
	static const enum mrcache_monitor_kind kinds[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_AUTO,
	};
	int ran = 0;

#ifdef TEST_SANITIZED
	SKIP("malloc is the sanitizer's here, not glibc's: no mmap threshold to check");
#endif
	setvbuf(stdout, NULL, _IOLBF, 0);
	CHECK_EQ(in_child(NULL, 0), CHILD_CHANGED);
	printf("control: a 4 MiB block freed by the program raises the threshold: seen\n");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		int r = in_child(run_monitor, kinds[i]);

		printf("monitor %-6s %s\n", mrcache_monitor_name(kinds[i]), stage[r]);
		CHECK(r == CHILD_OK || r == CHILD_UNAVAILABLE);
		ran += r == CHILD_OK;
	}
	CHECK(ran > 0);
	return test_result();
}
