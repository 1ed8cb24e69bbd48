/* SPDX-License-Identifier: MIT */
/*
 * The multi-threaded stale-registration harness (issue 25, part 4): what
 * a program with threads, signal handlers and fork does to a cache, under
 * every monitor that starts here, checked with the io_uring oracle (a real
 * pin, READ_FIXED, every byte compared: tests/util/oracle.h).
 *
 * threads: THREADS threads share one cache.  Each takes a free slot (a
 *   fixed address) with mmap(MAP_FIXED_NOREPLACE), gets and checks it,
 *   then gives it back by munmap, by mremap moving it away, or by mremap
 *   shrink then munmap.  The others are mapping at the freed address the
 *   moment the kernel frees it, before the unmapping call has returned:
 *   a monitor that reports late hands out the old pages.
 * signal: each thread has a timer (50 us, 200 us, ...) whose handler
 *   munmaps and maps again, maps over with MAP_FIXED, or MADV_DONTNEEDs the
 *   thread's cached victim while the thread caches, discards and remaps
 *   other memory; the thread then checks the victim.  A handler that waits
 *   for its own thread hangs: the child's time limit fails it.
 * fork: one thread forks while the others run the threads loop; the child
 *   uses a cache of its own (map, get, check, unmap, map there again, get,
 *   check) and must finish in time.
 *
 * MRC_STALE_MS (the run time of each variant, default 700) and
 * MRC_STALE_ONLY ("uffd:signal": one monitor, optionally one variant)
 * make it a stress run.
 *
 * `none` runs first as the control and must read stale bytes in each
 * variant; every other monitor must read none (bpf's threads variant read
 * 52 stale of 59,165 checks in 20 runs of 2 s before its programs cleared
 * the ranges a call maps: issue 25 item 2 under bpf).  Each monitor runs
 * in a child process of its own, under a time limit.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "oracle.h"
#include "testutil.h"

#ifndef sigev_notify_thread_id	/* glibc before 2.35 */
#define sigev_notify_thread_id _sigev_un._tid
#endif

#define PAGE 4096ul
#define LEN (16 * PAGE)
#define SLOTS 8
#define THREADS 4
#define RUN_MS 700
#define CHILD_TIMEOUT_S 60

struct tally {
	unsigned checks, stale, errors, busy;
};

static struct {
	struct oracle o;
	struct mrcache *c;
	char *slot[SLOTS];
	unsigned slot_how[SLOTS];	/* how its last owner gave it back */
	unsigned stale_after[3];	/* stale checks by that */
	unsigned sig_stale_after[3];	/* signal: by the handler's change */
	uint64_t end;
	unsigned forks, fork_stale, fork_fail;
} g;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

/* get + check every byte + put, counted in t. */
static void get_check(struct oracle *o, struct mrcache *c, unsigned lane, char *p,
		      struct tally *t)
{
	struct mrcache_region *r;
	int rc = mrcache_get(c, p, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);

	if (rc == -EAGAIN || rc == -ENOMEM || rc == -ENOSPC) {
		t->busy++;
		return;
	}
	if (rc) {
		fprintf(stderr, "get: %s\n", strerror(-rc));
		t->errors++;
		return;
	}
	rc = oracle_check(o, lane, r, p, LEN);
	mrcache_put(c, r);
	t->checks++;
	if (rc == ORACLE_STALE)
		t->stale++;
	else if (rc < 0) {
		fprintf(stderr, "oracle: %s\n", strerror(-rc));
		t->errors++;
	}
}

/* Give slot memory p back: munmap, mremap away, or mremap shrink. */
static void unmap_slot(char *p, char *scratch, unsigned how)
{
	switch (how) {
	case 0:
		munmap(p, LEN);
		break;
	case 1:
		/* The scratch range stays reserved: mapped over, not unmapped. */
		if (mremap(p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, scratch) == scratch) {
			mmap(scratch, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			break;
		}
		munmap(p, LEN);
		break;
	default:
		if (mremap(p, LEN, PAGE, 0) == p)
			munmap(p, PAGE);
		else
			munmap(p, LEN);
		break;
	}
}

struct worker {
	pthread_t tid;
	unsigned lane, seed;
	int timer_us;		/* signal variant: the timer's period */
	int forker;		/* fork variant: this thread forks */
	struct tally t;
};

/* Under ASan (GCC 12's libsanitizer) the allocator's locks are not taken
 * around fork(): see sanitizer_cannot_fork(). */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_FORK_UNSAFE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_FORK_UNSAFE 1
#endif
#endif

static void slot_loop(struct worker *w)
{
	char *scratch = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (scratch == MAP_FAILED) {
		w->t.errors++;
		return;
	}
	while (now_ns() < g.end) {
		unsigned s = rnd(&w->seed) % SLOTS;
		char *p = mmap(g.slot[s], LEN, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

		if (p == MAP_FAILED)
			continue;	/* another thread holds it */
		if (p != g.slot[s]) {	/* a kernel without MAP_FIXED_NOREPLACE */
			munmap(p, LEN);
			w->t.errors++;
			break;
		}
		{
			unsigned before = w->t.stale, how = rnd(&w->seed) % 3;

			get_check(&g.o, g.c, w->lane, p, &w->t);
			/* The slot's previous owner wrote slot_how before its
			 * unmap; the kernel orders that, TSan cannot see it. */
			if (w->t.stale != before)
				__atomic_fetch_add(&g.stale_after[__atomic_load_n(&g.slot_how[s],
										 __ATOMIC_RELAXED)],
						   1, __ATOMIC_RELAXED);
			__atomic_store_n(&g.slot_how[s], how, __ATOMIC_RELAXED);
			unmap_slot(p, scratch, how);
		}
	}
	munmap(scratch, LEN);
}

/* --- signal variant: per-thread victim replaced by the thread's timer --- */

/* LOST: the handler unmapped the victim and another thread mapped the
 * address before the handler could map it again; the address is that
 * thread's now, so this one must neither check nor unmap it. */
enum { IDLE, ARMED, REPLACED, LOST };
static __thread struct {
	char *p;
	volatile sig_atomic_t state;
	unsigned countdown, how;
} victim;

static void replace_victim(int sig)
{
	int saved = errno;

	(void)sig;
	if (victim.state != ARMED || --victim.countdown)
		goto out;
	switch (victim.how % 3) {
	case 0:
		munmap(victim.p, LEN);
		if (mmap(victim.p, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != victim.p) {
			victim.state = LOST;
			goto out;
		}
		break;
	case 1:
		if (mmap(victim.p, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != victim.p)
			goto out;
		break;
	default:
		madvise(victim.p, LEN, MADV_DONTNEED);
		break;
	}
	victim.state = REPLACED;
out:
	errno = saved;
}

static void timer_mask(int block)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

/* Work for the timer to interrupt: watch, unwatch, discard, remap. */
static void churn(struct worker *w, char *pages, unsigned i)
{
	char *p = pages + (i % 16) * PAGE;
	struct mrcache_region *r;

	if (i % 32 == 0 && mrcache_get(g.c, pages, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r) == 0)
		mrcache_put(g.c, r);
	/* One MAP_FIXED call replaces the page, an unmap to the monitors.  Not
	 * munmap and then MAP_FIXED: in between, another thread's mmap(NULL)
	 * can take the freed page into its victim, which this thread's next
	 * munmap of "its" page would then cut (get: EFAULT, a SEGV in the
	 * oracle, data that looked stale: seen under ASan, whose layout puts
	 * the victims next to the churn pages). */
	if (i % 32 == 16) {
		mmap(p, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
	} else {
		madvise(p, PAGE, MADV_DONTNEED);
	}
	(void)w;
}

static void signal_loop(struct worker *w)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGRTMIN };
	struct itimerspec its = { { 0, w->timer_us * 1000l }, { 0, w->timer_us * 1000l } };
	char *pages = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned round = 0, step = 0;
	timer_t timer;

	sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
	timer_mask(1);
	if (pages == MAP_FAILED || timer_create(CLOCK_MONOTONIC, &sev, &timer)) {
		w->t.errors++;
		return;
	}
	timer_settime(timer, 0, &its, NULL);
	while (now_ns() < g.end) {
		struct tally first = { 0 };

		victim.p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				-1, 0);
		if (victim.p == MAP_FAILED) {
			w->t.errors++;
			break;
		}
		get_check(&g.o, g.c, w->lane, victim.p, &first);
		w->t.errors += first.errors;
		victim.how = round++;
		victim.countdown = 2 + round % 8;
		victim.state = ARMED;
		timer_mask(0);
		while (victim.state == ARMED && now_ns() < g.end + 2000000000ull)
			churn(w, pages, step++);
		timer_mask(1);
		if (victim.state == REPLACED) {
			unsigned before = w->t.stale;

			get_check(&g.o, g.c, w->lane, victim.p, &w->t);
			if (w->t.stale != before)
				__atomic_fetch_add(&g.sig_stale_after[victim.how % 3], 1,
						   __ATOMIC_RELAXED);
		}
		if (victim.state != LOST)
			munmap(victim.p, LEN);
		victim.state = IDLE;
	}
	timer_delete(timer);
	munmap(pages, LEN);
}

/* --- fork variant: the child runs a cache of its own --- */

static int fork_child(enum mrcache_monitor_kind m)
{
	struct mrcache_config cfg;
	struct tally t = { 0 };
	struct mrcache *c;
	struct oracle o;
	char *p;

	if (oracle_init(&o, 1, LEN))
		return 2;
	oracle_config(&o, &cfg, m, 64);
	if (mrcache_create(&cfg, &c))
		return 2;
	for (int i = 0; i < 4; i++) {
		p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		get_check(&o, c, 0, p, &t);
		munmap(p, LEN);
		if (mmap(p, LEN, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != p)
			continue;
		get_check(&o, c, 0, p, &t);
		munmap(p, LEN);
	}
	mrcache_destroy(c);
	oracle_fini(&o);
	if (t.errors)
		return 2;
	return t.stale ? 1 : 0;
}

static enum mrcache_monitor_kind cur_monitor;

static void fork_loop(struct worker *w)
{
	while (now_ns() < g.end) {
		int status = 0, t;
		pid_t pid = fork();

		if (pid < 0) {
			w->t.errors++;
			return;
		}
		if (pid == 0)
			_exit(fork_child(cur_monitor));
		for (t = 0; t < 20000 && waitpid(pid, &status, WNOHANG) != pid; t++)
			usleep(1000);
		if (t == 20000) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "fork child hung\n");
		}
		g.forks++;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
			g.fork_stale++;
		else if (!WIFEXITED(status) || WEXITSTATUS(status))
			g.fork_fail++;
	}
}

enum variant { THREADS_V, SIGNAL_V, FORK_V, VARIANTS };
static const char *const variant_name[] = { "threads", "signal", "fork" };
static enum variant cur_variant;
static uint64_t run_ns = RUN_MS * 1000000ull;
static int only_variant = -1;

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	if (cur_variant == SIGNAL_V)
		signal_loop(w);
	else if (w->forker)
		fork_loop(w);
	else
		slot_loop(w);
	return NULL;
}

/* Free slots at fixed addresses, PROT_NONE guards between them so that
 * nothing else lands there. */
static int slots_init(void)
{
	char *area = mmap(NULL, SLOTS * 2 * LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (area == MAP_FAILED)
		return -1;
	for (int i = 0; i < SLOTS; i++) {
		g.slot[i] = area + 2 * i * LEN;
		munmap(g.slot[i], LEN);
	}
	return 0;
}

/* One variant under the cache; returns the stale count, -1 on errors. */
static long run_variant(enum mrcache_monitor_kind m, enum variant v)
{
	struct worker w[THREADS];
	struct tally sum = { 0 };

	memset(w, 0, sizeof(w));
	cur_variant = v;
	g.forks = g.fork_stale = g.fork_fail = 0;
	g.end = now_ns() + run_ns;
	for (unsigned i = 0; i < THREADS; i++) {
		w[i].lane = i;
		w[i].seed = i * 7919 + 1;
		w[i].timer_us = i & 1 ? 200 : 50;
		w[i].forker = v == FORK_V && i == 0;
		if (pthread_create(&w[i].tid, NULL, worker_run, &w[i]))
			return -1;
	}
	for (unsigned i = 0; i < THREADS; i++) {
		pthread_join(w[i].tid, NULL);
		sum.checks += w[i].t.checks;
		sum.stale += w[i].t.stale;
		sum.errors += w[i].t.errors;
		sum.busy += w[i].t.busy;
	}
	printf("  %-5s %-7s: %u stale of %u checks (%u busy, %u errors)", mrcache_monitor_name(m),
	       variant_name[v], sum.stale, sum.checks, sum.busy, sum.errors);
	if (v == THREADS_V)
		printf(" (after munmap %u, mremap move %u, mremap shrink %u)",
		       g.stale_after[0], g.stale_after[1], g.stale_after[2]);
	if (v == SIGNAL_V)
		printf(" (after munmap + mmap %u, mmap MAP_FIXED over %u, MADV_DONTNEED %u)",
		       g.sig_stale_after[0], g.sig_stale_after[1], g.sig_stale_after[2]);
	if (v == FORK_V)
		printf("; %u forks: %u children stale, %u failed", g.forks, g.fork_stale,
		       g.fork_fail);
	printf("\n");
	if (sum.errors || g.fork_fail || !sum.checks)
		return -1;
	return (long)sum.stale + g.fork_stale;
}

/* The fork variant's child creates a cache of its own; the uffd monitor
 * starts a thread for it.  TSan refuses that after a fork of a threaded
 * process ("starting new threads after multi-threaded fork is not
 * supported").  Under ASan (GCC 12's libsanitizer) the allocator's locks
 * are not taken around fork(), and the parent's own uffd monitor thread
 * allocates and frees as it reads events: a child forked meanwhile
 * inherits a size class's lock held and hangs at its first allocation of
 * that class.  Seen in the host-asan suite of the CI run of aed4c08,
 * "fork child hung": the child's monitor thread waited in
 * SizeClassAllocator64::GetFromAllocator (calloc in pthread_getattr_np);
 * 6 of 8 runs of MRC_STALE_ONLY=uffd:fork at 2 s, the plain build never
 * (100-150 forks a run).  The plain build runs it. */
static const char *sanitizer_cannot_fork(enum mrcache_monitor_kind m, enum variant v)
{
	if (v != FORK_V || m != MRCACHE_MONITOR_UFFD)
		return NULL;
#if defined(__SANITIZE_THREAD__)
	return "TSan cannot start threads after a fork of a threaded process";
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
	return "TSan cannot start threads after a fork of a threaded process";
#endif
#endif
#ifdef ASAN_FORK_UNSAFE
	return "ASan's allocator is not fork-safe, and the parent's monitor thread allocates";
#endif
	return NULL;
}

static int child(enum mrcache_monitor_kind m)
{
	struct mrcache_config cfg;
	long stale[VARIANTS];
	const char *why;
	int rc, failed = 0;
	struct sigaction sa = { .sa_handler = replace_victim, .sa_flags = SA_RESTART };

	cur_monitor = m;
	timer_mask(1);
	sigaction(SIGRTMIN, &sa, NULL);
	if (oracle_init(&g.o, THREADS, LEN) || slots_init())
		return 77;
	oracle_config(&g.o, &cfg, m, 1024);
	rc = mrcache_create(&cfg, &g.c);
	if (rc) {
		printf("  %-5s cannot start here: %s\n", mrcache_monitor_name(m), strerror(-rc));
		return 77;
	}
	for (int v = 0; v < VARIANTS; v++) {
		if (only_variant >= 0 && v != only_variant)
			continue;
		why = sanitizer_cannot_fork(m, (enum variant)v);
		if (why) {
			printf("  %-5s %-7s: skipped (the child's monitor thread: %s)\n",
			       mrcache_monitor_name(m), variant_name[v], why);
			continue;
		}
		stale[v] = run_variant(m, (enum variant)v);
		if (stale[v] < 0)
			failed = 1;
		else if (m == MRCACHE_MONITOR_NONE ? stale[v] == 0 : stale[v] > 0)
			failed = 1;
	}
	mrcache_destroy(g.c);
	oracle_fini(&g.o);
	return failed;
}

static int run_monitor(enum mrcache_monitor_kind m)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child(m));
	status = test_wait_child(pid, CHILD_TIMEOUT_S);
	if (status >= 0)
		return status;
	printf("  %-5s FAIL: no progress in %d s (deadlocked?)\n", mrcache_monitor_name(m),
	       CHILD_TIMEOUT_S);
	return 1;
}

int main(void)
{
	static const enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_BPF,
		MRCACHE_MONITOR_UFFD, MRCACHE_MONITOR_HOOKS,
	};
	const char *ms = getenv("MRC_STALE_MS"), *only = getenv("MRC_STALE_ONLY");
	enum mrcache_monitor_kind only_monitor = MRCACHE_MONITOR_AUTO;
	int failed = 0, real = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (ms && atoi(ms) > 0)
		run_ns = (uint64_t)atoi(ms) * 1000000;
	if (only && *only) {
		char name[32], *colon;

		snprintf(name, sizeof(name), "%s", only);
		colon = strchr(name, ':');
		if (colon) {
			*colon++ = 0;
			for (int v = 0; v < VARIANTS; v++)
				if (!strcmp(colon, variant_name[v]))
					only_variant = v;
		}
		if (mrcache_monitor_parse(name, &only_monitor) || (colon && only_variant < 0)) {
			fprintf(stderr, "MRC_STALE_ONLY=%s: not MONITOR[:VARIANT]\n", only);
			return 1;
		}
	}
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++) {
		int rc;

		if (only_monitor != MRCACHE_MONITOR_AUTO && monitors[i] != only_monitor)
			continue;
		rc = run_monitor(monitors[i]);

		printf("%s: %s\n", mrcache_monitor_name(monitors[i]),
		       rc == 0 ? "PASS" : rc == 77 ? "SKIP" : "FAIL");
		if (monitors[i] == MRCACHE_MONITOR_NONE && rc == 77 && !only)
			SKIP("io_uring is unusable here");
		if (rc == 0 && monitors[i] != MRCACHE_MONITOR_NONE)
			real++;
		else if (rc != 77)
			failed += rc != 0;
	}
	if (failed)
		return 1;
	if (!real && only_monitor != MRCACHE_MONITOR_NONE)
		SKIP("no real monitor starts here");
	return 0;
}
