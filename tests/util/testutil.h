/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - checks for test programs: a failed CHECK prints where and
 * why and marks the test failed but keeps going, so one run shows every
 * broken expectation.  Exit codes: 0 pass, 1 fail, 77 skip.
 */
#ifndef MRC_TESTUTIL_H
#define MRC_TESTUTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

extern int test_failures;

/* Wait up to timeout_s for the child pid: its exit code (1 if a signal
 * ended it), or -1 if it was still running, after killing and reaping it
 * (a child that hangs is a failure the caller names). */
int test_wait_child(pid_t pid, int timeout_s);
/* Run a shell command line; its output (add 2>&1 for stderr) in out,
 * NUL-terminated and cut at size; returns its exit code, or -1 when it
 * could not run or did not exit. */
int test_capture(const char *cmd, char *out, size_t size);

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		__atomic_fetch_add(&test_failures, 1, __ATOMIC_RELAXED); \
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ != b_) {							\
		fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", \
			__FILE__, __LINE__, #a, #b, a_, b_);		\
		__atomic_fetch_add(&test_failures, 1, __ATOMIC_RELAXED); \
	}								\
} while (0)

#define SKIP(...) do {							\
	printf("SKIP: " __VA_ARGS__);					\
	printf("\n");							\
	exit(77);							\
} while (0)

static inline int test_result(void)
{
	if (test_failures)
		fprintf(stderr, "%d check(s) failed\n", test_failures);
	return test_failures ? 1 : 0;
}

/* TEST_SANITIZED: built with ASan or TSan, whose malloc replaces glibc's
 * (no glibc chunk headers, arenas or mmap threshold; free() takes the
 * sanitizer's locks), and which .ci/run builds with tests and tools only. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TEST_SANITIZED 1
#endif
#endif

#endif
