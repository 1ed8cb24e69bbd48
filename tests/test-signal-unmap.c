/* SPDX-License-Identifier: MIT */
/*
 * An unmapping signal handler.  A timer signal interrupts the main thread
 * while it runs cache calls and unmaps cached memory of its own (so it is
 * often inside the monitor's report path or the cache's drain of it); the
 * handler unmaps a cached "victim" range, or free()s it (a block glibc
 * mmapped: its free takes no lock), and maps fresh memory there.  The
 * report path must be async-signal-safe: a handler that interrupts its own
 * thread inside it must not wait for that thread (it would wait forever;
 * a child that does not finish in time fails).  After each replacement the
 * main thread checks the victim with the io_uring oracle: every real
 * monitor must miss and read fresh data; `none`, the negative control,
 * must hit and read stale data.  Each monitor runs in a child of its own.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#define PAGE 4096ul
#define VICTIM_LEN (64 * PAGE)	/* above the mmap threshold set below */
#define CHURN 16		/* pages of a cached range the main thread discards */
#define RUN_NS (3ull * 1000000000)
#define CHILD_TIMEOUT_S 60

/* A sanitizer's free() takes its allocator's locks: not from a handler. */
#ifdef TEST_SANITIZED
#define FREE_IN_HANDLER 0
#else
#define FREE_IN_HANDLER 1
#endif

enum { IDLE, ARMED, REPLACED };

static struct {
	char *block;		/* the victim: a malloc()ed block, or a mapping */
	char *base;		/* its page-aligned mapping */
	size_t map_len;
	int by_free;		/* give it back with free(), not munmap() */
	int state;		/* atomic: IDLE, ARMED (cached), REPLACED */
	unsigned countdown;	/* signals left before the handler replaces it */
	unsigned signals, replaced;
} victim;

static void replace_victim(int sig)
{
	int saved = errno;

	__atomic_fetch_add(&victim.signals, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&victim.state, __ATOMIC_ACQUIRE) == ARMED && !--victim.countdown) {
		if (victim.by_free)
			free(victim.block);
		else
			munmap(victim.base, victim.map_len);
		if (mmap(victim.base, victim.map_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == victim.base) {
			victim.replaced++;
			__atomic_store_n(&victim.state, REPLACED, __ATOMIC_RELEASE);
		}
	}
	errno = saved;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static void timer_signals(int on)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigprocmask(on ? SIG_UNBLOCK : SIG_BLOCK, &set, NULL);
}

/* A new victim, cached (the signal is blocked meanwhile). */
static int arm_victim(struct oracle *o, struct mrcache *c, unsigned round)
{
	int missed;

	victim.by_free = FREE_IN_HANDLER && (round & 1);
	if (victim.by_free) {
		victim.block = malloc(VICTIM_LEN);
		if (!victim.block)
			return -ENOMEM;
		victim.base = (char *)((uintptr_t)victim.block & ~(PAGE - 1));
		victim.map_len = VICTIM_LEN + PAGE;
	} else {
		victim.base = victim.block = mmap(NULL, VICTIM_LEN, PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (victim.block == MAP_FAILED)
			return -errno;
		victim.map_len = VICTIM_LEN;
	}
	memset(victim.block, 1, VICTIM_LEN);
	/* Not at the first signal, which is pending when the mask opens. */
	victim.countdown = 2 + round % 16;
	if (oracle_probe(o, c, victim.block, VICTIM_LEN, &missed) != ORACLE_FRESH || !missed)
		return -EIO;
	__atomic_store_n(&victim.state, ARMED, __ATOMIC_RELEASE);
	return 0;
}

/* The replaced victim: 1 if it behaved as the monitor must, else 0. */
static int check_victim(struct oracle *o, struct mrcache *c, enum mrcache_monitor_kind m)
{
	int missed, v = oracle_probe(o, c, victim.block, VICTIM_LEN, &missed);
	int ok = m == MRCACHE_MONITOR_NONE ? !missed && v == ORACLE_STALE
					   : missed && v == ORACLE_FRESH;

	if (!ok)
		printf("  %s: after the handler's %s: %s, %s\n", mrcache_monitor_name(m),
		       victim.by_free ? "free" : "munmap", missed ? "miss" : "hit",
		       v == ORACLE_FRESH ? "fresh" : v == ORACLE_STALE ? "stale" : strerror(-v));
	mrcache_invalidate(c, victim.block, VICTIM_LEN);
	munmap(victim.base, victim.map_len);
	return ok;
}

/* Work for the timer to interrupt, mostly inside the report path: discard
 * pages of a cached range (each madvise reports to the cache twice, even
 * once the range is no longer cached); now and then cache the range again
 * (a drain, a watch) and replace a page of it (an unmap event). */
static void churn(struct mrcache *c, char *pages, unsigned i)
{
	char *p = pages + (i % CHURN) * PAGE;
	struct mrcache_region *r;

	if (i % 64 == 0 && mrcache_get(c, pages, CHURN * PAGE, MRCACHE_ACCESS_LOCAL_WRITE, &r) == 0)
		mrcache_put(c, r);
	if (i % 64 == 32) {
		munmap(p, PAGE);
		mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
	} else {
		madvise(p, PAGE, MADV_DONTNEED);
	}
}

static int child(enum mrcache_monitor_kind m)
{
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa = { .sa_handler = replace_victim, .sa_flags = SA_RESTART };
	unsigned rounds = 0, good = 0, churned = 0;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct oracle o;
	uint64_t end;
	char *pages;
	int rc;

	if (oracle_init(&o, 1, VICTIM_LEN + PAGE))
		return 77;
	mallopt(M_MMAP_THRESHOLD, 64 << 10);	/* the victim's block is mmapped */
	oracle_config(&o, &cfg, m, 256);
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		printf("  %-5s SKIP (cannot start here: %s)\n", mrcache_monitor_name(m), strerror(-rc));
		return 77;
	}
	pages = mmap(NULL, CHURN * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (pages == MAP_FAILED)
		return 1;
	timer_signals(0);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	end = now_ns() + RUN_NS;
	while (now_ns() < end || !rounds) {
		if (arm_victim(&o, c, rounds)) {
			printf("  %s: cannot cache a victim\n", mrcache_monitor_name(m));
			return 1;
		}
		timer_signals(1);
		while (__atomic_load_n(&victim.state, __ATOMIC_ACQUIRE) != REPLACED)
			churn(c, pages, churned++);
		timer_signals(0);
		good += check_victim(&o, c, m);
		rounds++;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("  %-5s %s: %u of %u replacements as expected (%u signals, %u churn steps)\n",
	       mrcache_monitor_name(m), good == rounds ? "PASS" : "FAIL", good, rounds,
	       victim.signals, churned);
	mrcache_destroy(c);
	oracle_fini(&o);
	return good == rounds ? 0 : 1;
}

/* Run child(m) in a process of its own; one that hangs is a failure. */
static int run_monitor(enum mrcache_monitor_kind m)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(m));
	status = test_wait_child(pid, CHILD_TIMEOUT_S);
	if (status >= 0)
		return status;
	printf("  %-5s FAIL: no progress in %d s (deadlocked in the signal handler?)\n",
	       mrcache_monitor_name(m), CHILD_TIMEOUT_S);
	return 1;
}

int main(void)
{
	enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
	};
	size_t n = sizeof(monitors) / sizeof(monitors[0]);
	const char *env = getenv("MRCACHE_MONITOR");
	int failed = 0, real = 0, control = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* MRCACHE_MONITOR (the guest's `kernel`) picks the one real monitor. */
	if (env && *env && mrcache_monitor_parse(env, &monitors[1]) == 0)
		n = monitors[1] == MRCACHE_MONITOR_NONE ? 1 : 2;
	for (size_t i = 0; i < n; i++) {
		int rc = run_monitor(monitors[i]);

		if (rc == 0 && monitors[i] == MRCACHE_MONITOR_NONE)
			control++;
		else if (rc == 0)
			real++;
		else if (rc != 77)
			failed++;
	}
	if (failed)
		return 1;
	if (!control || !real)
		SKIP("the negative control or every real monitor could not run");
	return 0;
}
