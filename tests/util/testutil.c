/* SPDX-License-Identifier: MIT */
/* testutil.c - the failure counter behind CHECK, a bounded wait for a
 * child, and a command's output (testutil.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
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

int test_capture(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int status;

	if (size)
		out[0] = 0;
	if (!p)
		return -1;
	while (n + 1 < size && fgets(out + n, (int)(size - n), p))
		n += strlen(out + n);
	status = pclose(p);
	return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
