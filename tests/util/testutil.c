/* SPDX-License-Identifier: MIT */
/* testutil.c - the failure counter behind CHECK, and a bounded wait for a
 * child (testutil.h). */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

int test_failures;

int test_wait_child(pid_t pid, int timeout_s)
{
	int status = 0;

	for (int t = 0; t < timeout_s * 10; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}
