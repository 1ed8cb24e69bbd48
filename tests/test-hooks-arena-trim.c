/* SPDX-License-Identifier: MIT */
/*
 * malloc_trim() and thread arenas (hooks).  malloc_trim(0) discards the
 * free pages of every arena's heaps, including a thread heap no free()
 * has shown the hooks yet.  A thread caches a 32 KiB block of its own
 * arena, frees it between two live neighbours (so that free cannot trim,
 * and reports nothing), calls malloc_trim(0) and gets the same address
 * back from malloc: the get must miss, and the io_uring oracle read fresh
 * data.  Again with 70 thread arenas alive, each seen by a trimming free
 * first (more than the hooks' table of heaps once held), and the last
 * thread's heap the one trimmed.  Negative control: under `none` the get
 * hits and reads stale data.  Every case runs in a child of its own.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#define BLOCK (32 << 10)
#define MANY 70

struct job {
	struct oracle *o;
	struct mrcache *c;
	int missed, verdict;
	const char *why;	/* set when the case cannot be made here */
};

static pthread_barrier_t all_up, all_done;

/* A free that may trim this thread's heap, which shows it to the hooks
 * (volatile: the compiler may drop a malloc/free pair). */
static void trimming_free(void)
{
	void *volatile big = malloc(1 << 20);

	free(big);
}

/* In a thread of its own arena: cache, free untrimmed, trim, reuse. */
static void trim_unseen(struct job *j)
{
	char *left = malloc(1024), *p = malloc(BLOCK), *right = malloc(1024), *q;
	int missed;

	memset(p, 1, BLOCK);
	if (oracle_probe(j->o, j->c, p, BLOCK, &missed) != ORACLE_FRESH || !missed) {
		j->why = "the first get did not miss with fresh data";
		return;
	}
	free(p);
	malloc_trim(0);
	q = malloc(BLOCK);
	if (q != p) {
		j->why = "malloc did not return the same block";
		return;
	}
	j->verdict = oracle_probe(j->o, j->c, q, BLOCK, &j->missed);
	free(q);
	free(left);
	free(right);
}

static void *one_thread(void *arg)
{
	trim_unseen(arg);
	return NULL;
}

/* Many arenas, each heap shown to the hooks by a free that may trim;
 * the last thread runs the case. */
static void *many_thread(void *arg)
{
	struct job *j = arg;

	/* The running case's heap is shown last, after the 69 others. */
	if (!j->o)
		trimming_free();
	pthread_barrier_wait(&all_up);
	if (j->o) {
		trimming_free();
		trim_unseen(j);
	}
	pthread_barrier_wait(&all_done);
	return NULL;
}

static int run_case(int many, enum mrcache_monitor_kind m)
{
	struct job j = { 0 }, idle[MANY];
	pthread_t t[MANY];
	struct mrcache_config cfg;
	struct oracle o;
	int ok, rc;

	if (oracle_init(&o, 1, BLOCK))
		return 77;
	mallopt(M_ARENA_MAX, 4 * MANY);	/* every thread its own arena */
	mallopt(M_MMAP_THRESHOLD, 4 << 20);	/* 1 MiB blocks from the heap */
	oracle_config(&o, &cfg, m, 64);
	rc = mrcache_create(&cfg, &j.c);
	if (rc) {
		printf("  %-5s SKIP (cannot start here: %s)\n", mrcache_monitor_name(m), strerror(-rc));
		return 77;
	}
	j.o = &o;
	if (!many) {
		pthread_create(&t[0], NULL, one_thread, &j);
		pthread_join(t[0], NULL);
	} else {
		pthread_barrier_init(&all_up, NULL, MANY);
		pthread_barrier_init(&all_done, NULL, MANY);
		memset(idle, 0, sizeof(idle));
		for (int i = 0; i < MANY; i++)
			pthread_create(&t[i], NULL, many_thread, i == MANY - 1 ? &j : &idle[i]);
		for (int i = 0; i < MANY; i++)
			pthread_join(t[i], NULL);
	}
	if (j.why) {
		printf("  %-10s %-5s SKIP (%s)\n", many ? "70-arenas" : "one-arena",
		       mrcache_monitor_name(m), j.why);
		return 77;
	}
	ok = m == MRCACHE_MONITOR_NONE ? !j.missed && j.verdict == ORACLE_STALE
				       : j.missed && j.verdict == ORACLE_FRESH;
	printf("  %-10s %-5s %s (%s, %s)\n", many ? "70-arenas" : "one-arena",
	       mrcache_monitor_name(m), ok ? "PASS" : "FAIL", j.missed ? "miss" : "hit",
	       j.verdict == ORACLE_FRESH ? "fresh" : j.verdict == ORACLE_STALE ? "stale" : "error");
	mrcache_destroy(j.c);
	oracle_fini(&o);
	return ok ? 0 : 1;
}

int main(void)
{
	static const enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF,
	};
	int failed = 0, hooks_passed = 0, control = 0;

#ifdef TEST_SANITIZED
	SKIP("malloc is the sanitizer's here, not glibc's: nothing of glibc's to check");
#endif
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int many = 0; many < 2; many++) {
		for (size_t k = 0; k < sizeof(monitors) / sizeof(monitors[0]); k++) {
			int status = 0;
			pid_t pid = fork();

			if (pid == 0)
				_exit(run_case(many, monitors[k]));
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
				printf("  child crashed\n");
				failed++;
			} else if (WEXITSTATUS(status) == 1) {
				failed++;
			} else if (WEXITSTATUS(status) == 0) {
				hooks_passed += monitors[k] == MRCACHE_MONITOR_HOOKS;
				control += monitors[k] == MRCACHE_MONITOR_NONE;
			}
		}
	}
	if (failed)
		return 1;
	if (!hooks_passed || !control)
		SKIP("the hooks or the negative control could not run");
	return 0;
}
