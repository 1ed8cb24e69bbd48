/* SPDX-License-Identifier: MIT */
/*
 * The README's first command: mrc-demo must show the hazard with monitor
 * none and correct data with every monitor that starts, and say so in its
 * exit status.  Skips when no monitor can start here, or when malloc is
 * not glibc's and never hands a freed address back (ASan, TSan).
 */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "testutil.h"

int main(int argc, char **argv)
{
	char self[PATH_MAX], cmd[PATH_MAX + 32], line[512];
	int saw_wrong_none = 0, saw_no_monitor = 0, saw_no_reuse = 0, status;
	FILE *p;

	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(cmd, sizeof(cmd), "%s/../tools/mrc-demo 2>&1", dirname(self));
	p = popen(cmd, "r");
	if (!p)
		SKIP("cannot run %s", cmd);
	while (fgets(line, sizeof(line), p)) {
		fputs(line, stdout);
		if (strncmp(line, "  none ", 7) == 0 && strstr(line, "WRONG data"))
			saw_wrong_none = 1;
		if (strstr(line, "No monitor could start here"))
			saw_no_monitor = 1;
		if (strstr(line, "never returned a freed address"))
			saw_no_reuse = 1;
	}
	status = pclose(p);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		SKIP("%s: not built", cmd);
	if (saw_no_reuse)
		SKIP("this allocator (a sanitizer's?) never reuses a freed address");
	if (saw_no_monitor)
		SKIP("no monitor starts here; the demo can only show the hazard");
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK(saw_wrong_none);
	return test_result();
}
