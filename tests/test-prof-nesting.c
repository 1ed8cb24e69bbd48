/* SPDX-License-Identifier: MIT */
/*
 * lib/common/prof.c splits nested work: a miss's own time is the miss minus the
 * register and monitor work inside it, an invalidation's own time is the
 * invalidation minus the deregistrations inside it; inner work outside any
 * outer span is subtracted from nothing.  Checked on the JSON dump a
 * forked child writes at exit, against the durations it passed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "common/prof.h"
#include "testutil.h"

static uint64_t spin(uint64_t ns)
{
	uint64_t t0 = mrc_now_ns(), t;

	while ((t = mrc_now_ns()) - t0 < ns)
		;
	return t - t0;
}

/* Durations the child passed, reported to the parent through a pipe. */
struct passed {
	uint64_t miss, reg, watch, outside, inval, dereg;
};

static void child(int fd)
{
	struct passed p = { 0 };
	uint64_t t0;

	mrc_prof_init();
	if (!mrc_prof_on)
		_exit(2);
	/* Inner work before any outer span: subtracted from nothing. */
	p.outside = spin(30000);
	mrc_prof_add(MRC_PROF_DEREGISTER, p.outside);
	t0 = mrc_now_ns();
	spin(20000);				/* the miss's own work */
	p.watch = spin(5000);
	mrc_prof_add(MRC_PROF_WATCH, p.watch);
	p.reg = spin(40000);
	mrc_prof_add(MRC_PROF_REGISTER, p.reg);
	spin(10000);
	/* As the cache reports them: the span's start exact, its length
	 * taken inside (the parent reads it from the dump). */
	mrc_prof_add_span(MRC_PROF_MISS, t0);
	/* An invalidation that deregisters three regions. */
	t0 = mrc_now_ns();
	for (int i = 0; i < 3; i++) {
		uint64_t d = spin(8000);

		mrc_prof_add(MRC_PROF_DEREGISTER, d);
		p.dereg += d;
	}
	mrc_prof_add_span(MRC_PROF_INVALIDATE, t0);
	mrc_prof_add(MRC_PROF_MISS_OWN, 12345);	/* derived: ignored */
	if (write(fd, &p, sizeof(p)) != sizeof(p))
		_exit(3);
	exit(0);			/* atexit writes the dump */
}

static uint64_t total_of(const char *json, const char *kind)
{
	char key[64];
	const char *at;
	uint64_t v = UINT64_MAX;

	snprintf(key, sizeof(key), "\"%s\": {\"total_ns\": ", kind);
	at = strstr(json, key);
	if (at)
		sscanf(at + strlen(key), "%" SCNu64, &v);
	return v;
}

int main(void)
{
	char dir[] = "/tmp/test-prof-nesting.XXXXXX", prefix[64], path[128], json[8192];
	struct passed p;
	int fds[2], status;
	pid_t pid;
	FILE *f;
	size_t n;

	if (!mkdtemp(dir) || pipe(fds))
		return 1;
	snprintf(prefix, sizeof(prefix), "%s/p", dir);
	setenv("MRCACHE_PROF", prefix, 1);
	pid = fork();
	if (pid == 0)
		child(fds[1]);
	CHECK(read(fds[0], &p, sizeof(p)) == sizeof(p));
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));
	snprintf(path, sizeof(path), "%s.%d.json", prefix, (int)pid);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (!f)
		return test_result();
	n = fread(json, 1, sizeof(json) - 1, f);
	json[n] = 0;
	fclose(f);
	unlink(path);
	rmdir(dir);

	p.miss = total_of(json, "miss");
	p.inval = total_of(json, "invalidation");
	CHECK(p.miss >= 75000 && p.miss != UINT64_MAX);
	CHECK(p.inval >= 24000 && p.inval != UINT64_MAX);
	CHECK_EQ(total_of(json, "miss_own"), p.miss - p.reg - p.watch);
	CHECK_EQ(total_of(json, "invalidation_own"), p.inval - p.dereg);
	/* The deregistration before the miss is counted, not subtracted. */
	CHECK_EQ(total_of(json, "deregister"), p.outside + p.dereg);
	CHECK(total_of(json, "miss_own") >= 30000);
	return test_result();
}
