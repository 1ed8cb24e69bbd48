/* SPDX-License-Identifier: MIT */
/* machine.c - what the figures were measured on. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !colon)
			continue;
		colon += 1 + strspn(colon + 1, " \t");
		colon[strcspn(colon, "\n")] = 0;
		snprintf(buf, len, "%s", colon);
		break;
	}
	fclose(f);
}

void machine_describe(struct bench_run *r)
{
	struct utsname u;
	time_t t = time(NULL);

	r->nproc = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_model(r->cpu, sizeof(r->cpu));
	if (uname(&u) == 0)
		snprintf(r->kernel, sizeof(r->kernel), "%s %s", u.sysname,
			 u.release);
	strftime(r->date, sizeof(r->date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
}
