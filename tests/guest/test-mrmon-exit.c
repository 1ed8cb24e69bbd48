/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-exit: processes that die with live watches (some already
 * invalidated, events queued, the map mapped, a thread blocked in read())
 * leave nothing behind: the module's reference count returns to its value
 * before, and the kernel log stays clean (checked by the harness).
 * Control: while those processes live, the count is higher.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include "mrmon_test.h"

#define CHILDREN 8

static long module_refs(void)
{
	FILE *f = fopen("/sys/module/mrmon/refcnt", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static void *blocked_reader(void *arg)
{
	struct mon *m = arg;
	struct mrmon_event ev;

	fcntl(m->fd, F_SETFL, 0);
	while (read(m->fd, &ev, sizeof(ev)) > 0)
		;
	return NULL;
}

/* Sets up, signals readiness, then waits to be killed or told to exit. */
static void child(int ready[2], int go[2], int i)
{
	struct mon m;
	pthread_t t;
	char *p = mon_map_anon(64 * PAGE);
	uint32_t slot;
	uint64_t e;
	char c = 'r';

	close(ready[0]);
	close(go[1]);
	if (mon_open(&m, 128, 4) || !p)
		_exit(2);
	for (int k = 0; k < 64; k++)
		if (mon_watch(&m, p + k * PAGE, PAGE, k, &slot, &e))
			_exit(3);
	munmap(p, 8 * PAGE);		/* 8 events for a queue of 4 */
	if (i % 2)
		pthread_create(&t, NULL, blocked_reader, &m);
	if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
		_exit(4);
	_exit(0);			/* no unwatch, no close */
}

int main(void)
{
	int ready[2], go[2], status;
	pid_t pids[CHILDREN];
	long before, during, after = -1;
	char c;

	before = module_refs();
	if (before < 0)
		SKIP("mrmon not loaded");
	CHECK_EQ(pipe(ready), 0);
	CHECK_EQ(pipe(go), 0);
	for (int i = 0; i < CHILDREN; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			child(ready, go, i);
	}
	for (int i = 0; i < CHILDREN; i++)
		CHECK_EQ(read(ready[0], &c, 1), 1);
	during = module_refs();
	printf("module references: before %ld, with %d children %ld\n", before, CHILDREN, during);
	CHECK(during >= before + CHILDREN);	/* the control */
	/* Half exit normally, half are killed. */
	for (int i = 0; i < CHILDREN; i += 2)
		kill(pids[i], SIGKILL);
	close(go[1]);
	for (int i = 0; i < CHILDREN; i++) {
		CHECK_EQ(waitpid(pids[i], &status, 0), pids[i]);
		if (i % 2)
			CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* The last fput of an exiting task may be deferred a little. */
	for (int t = 0; t < 100 && (after = module_refs()) != before; t++)
		usleep(20000);
	printf("after: %ld\n", after);
	CHECK_EQ(after, before);
	return test_result();
}
