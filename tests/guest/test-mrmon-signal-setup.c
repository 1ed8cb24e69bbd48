/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-signal-setup: a SETUP or WATCH interrupted by a signal leaves
 * the module's reference count balanced, and the module cannot be
 * unloaded while another process has a live watch.
 *
 * Regression test for issue 13, defect 1: on 1682920, SETUP registered a
 * per-mm mmu_notifier and took a module reference only if that worked, but
 * its ->free_notifier always dropped one; mm_take_all_locks() fails with
 * EINTR when a signal is pending, and the core then calls ->free_notifier
 * itself.  Each interrupted SETUP dropped a reference it never took, until
 * rmmod succeeded under a live watch and that process's next
 * MADV_DONTNEED ran freed code.  The registration of an mm's first
 * interval notifier takes the same path, so today the first WATCH of an mm
 * may return EINTR (documented; the caller retries).
 *
 * Each attempt is a child that opens, SETUPs and WATCHes while the parent,
 * on another CPU, sends it SIGUSR1 in a loop (a handler without
 * SA_RESTART) and a thread of the child keeps its mmap_lock busy (see
 * hog()); the parent counts the EINTRs, and after one from WATCH the
 * child repeats it, which must then succeed.  A holder process keeps a live watch
 * throughout.  While a child's descriptor is open the count
 * must be above its value before, and after the child it must be back at
 * it; the attempts stop at the first imbalance, since driving the count
 * below zero makes the next unload hit BUG_ON in try_release_module_ref().
 * Then delete_module() must be refused and the holder's MADV_DONTNEED must
 * invalidate its word.  Controls: one more open descriptor shows in the
 * count; once the holder is gone the module does unload (no notifier
 * outlives a descriptor), and it is loaded again from
 * $MRC_TEST_BUILD/kmod/mrmon.ko, as it is if it wrongly unloaded above.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "mrmon_test.h"
#include "mrmon_priv.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define ATTEMPTS	300
#define BUDGET_S	4.0
#define HOG_BYTES	(1ul << 20)
#define HOGS		2

enum { GOT_NONE, GOT_EINTR_SETUP, GOT_EINTR_WATCH, GOT_ERROR };

/* The sender and the child run on different CPUs, so a signal can arrive
 * while the child is inside the ioctl. */
static int cpu_sender, cpu_child;

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

static volatile sig_atomic_t signalled;

static void on_usr1(int sig)
{
	signalled = sig;
}

/*
 * Threads of the child that keep the child's mmap_lock read-held, each
 * populating and zapping a region of its own in turn (two, so one holds it
 * while the other is between calls), so that the ioctl sleeps in
 * mmap_write_lock() just before mm_take_all_locks() and a signal sent
 * meanwhile is pending when that looks.  Without them the window is a few
 * microseconds of emulated time, and on a loaded host the sender's vCPU
 * seldom runs inside it.
 */
static volatile int hog_stop;

static void *hog(void *arg)
{
	char *region = arg;

	while (!hog_stop) {
		madvise(region, HOG_BYTES, MADV_POPULATE_WRITE);
		madvise(region, HOG_BYTES, MADV_DONTNEED);
	}
	return NULL;
}

/* SETUP if `setup`, then WATCH: 0 or the first error, *step which. */
static int setup_watch(int fd, int setup, char *page, int *step)
{
	struct mrmon_setup su = { .nslots = 16, .nevents = 16 };
	struct mrmon_range r = { .start = (uintptr_t)page, .len = PAGE };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	int rc = 0;

	*step = GOT_EINTR_SETUP;
	if (setup)
		rc = mon_ioctl(fd, MRMON_IOC_SETUP, &su);
	if (!rc) {
		*step = GOT_EINTR_WATCH;
		rc = mon_ioctl(fd, MRMON_IOC_WATCH, &b);
	}
	return rc;
}

/*
 * The child of one attempt: reports readiness, waits for the flood to
 * begin, SETUPs and WATCHes under it and reports what it got; after an
 * EINTR from WATCH, once the flood has stopped, WATCH again must succeed
 * (EINTR is transient).  Then reports that and waits to be told to exit.
 */
static void attempt_child(int ready, int go, char *page)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	char *region = mmap(NULL, HOGS * HOG_BYTES, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char got = GOT_ERROR, retried = 0;
	int fd, rc, step, tries = 0;
	pthread_t t[HOGS];
	sigset_t usr1;

	pin_self(cpu_child);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	/* (EINVAL without THP configured: PREEMPT_RT.) */
	if (region == MAP_FAILED ||
	    (madvise(region, HOGS * HOG_BYTES, MADV_NOHUGEPAGE) && mon_have_thp()) ||
	    sigaction(SIGUSR1, &sa, NULL) || pthread_sigmask(SIG_BLOCK, &usr1, NULL))
		_exit(1);
	for (int i = 0; i < HOGS; i++)
		if (pthread_create(&t[i], NULL, hog, region + i * HOG_BYTES))
			_exit(1);
	if (pthread_sigmask(SIG_UNBLOCK, &usr1, NULL))
		_exit(1);
	fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC);
	if (fd < 0 || mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs) || write(ready, "r", 1) != 1)
		_exit(1);
	while (!signalled)
		;
	rc = setup_watch(fd, 1, page, &step);
	if (rc == -EINTR)
		got = (char)step;
	else if (!rc)
		got = GOT_NONE;
	hog_stop = 1;
	for (int i = 0; i < HOGS; i++)
		pthread_join(t[i], NULL);
	if (write(ready, &got, 1) != 1)
		_exit(1);
	/* A SETUP is not repeated: on 1682920 a SETUP that succeeds leaves a
	 * notifier whose reference is dropped only a grace period after exit,
	 * which would hide this attempt's imbalance from the parent. */
	while (rc == -EINTR && step == GOT_EINTR_WATCH && tries++ < 10)
		rc = setup_watch(fd, 0, page, &step);
	retried = rc && got != GOT_EINTR_SETUP ? GOT_ERROR : GOT_NONE;
	if (write(ready, &retried, 1) != 1)
		_exit(1);
	while (read(go, &got, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/*
 * One attempt: fork, flood the child with SIGUSR1 until it reports, then
 * read the count while its descriptor is still open: it must show that
 * descriptor.  Returns GOT_*, or GOT_ERROR if a retry after EINTR failed;
 * *refs_open is the count then.
 */
static int attempt(char *page, long *refs_open)
{
	int ready[2], go[2], status;
	char c = GOT_ERROR, retried = GOT_ERROR;
	pid_t pid;

	*refs_open = LONG_MIN;
	if (pipe(ready) || pipe(go))
		return GOT_ERROR;
	pid = fork();
	if (pid == 0) {
		close(ready[0]);
		close(go[1]);
		attempt_child(ready[1], go[0], page);
	}
	close(ready[1]);
	close(go[0]);
	if (pid > 0 && read(ready[0], &c, 1) == 1) {
		struct pollfd pf = { .fd = ready[0], .events = POLLIN };

		while (poll(&pf, 1, 0) == 0)
			kill(pid, SIGUSR1);
		if (read(ready[0], &c, 1) != 1 || read(ready[0], &retried, 1) != 1)
			c = GOT_ERROR;
		*refs_open = priv_module_refs();
	}
	close(go[1]);
	close(ready[0]);
	if (pid > 0 && (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			WEXITSTATUS(status)))
		c = GOT_ERROR;
	if (retried != GOT_NONE)
		c = GOT_ERROR;
	return c >= GOT_NONE && c <= GOT_ERROR ? c : GOT_ERROR;
}

/*
 * The count once deferred puts are done: on 1682920 a process's notifier
 * is freed, and its reference dropped, an SRCU grace period after exit.
 * Returns as soon as it is at most `want`, or when it stops moving.
 */
static long refs_settled(long want)
{
	long v = priv_module_refs(), last = v;
	double t0 = priv_now(), moved = t0;

	while (v > want && priv_now() - t0 < 3.0 && priv_now() - moved < 0.3) {
		usleep(2000);
		v = priv_module_refs();
		if (v != last) {
			last = v;
			moved = priv_now();
		}
	}
	return v;
}

/* A process with a live watch: 'd' does MADV_DONTNEED of the watched
 * page and answers 'i' (word invalidated) or 'v'; anything else ends it. */
static void holder(int cmd, int reply)
{
	char *p = mon_map_anon(PAGE), c = 'r';
	struct mon m;
	uint32_t slot;
	uint64_t e;

	if (!p || mon_open(&m, 16, 16) || mon_watch(&m, p, PAGE, 1, &slot, &e))
		_exit(2);
	if (write(reply, &c, 1) != 1)
		_exit(3);
	while (read(cmd, &c, 1) == 1 && c == 'd') {
		madvise(p, PAGE, MADV_DONTNEED);
		c = mon_valid(&m, slot, e) ? 'v' : 'i';
		if (write(reply, &c, 1) != 1)
			_exit(4);
	}
	_exit(0);
}

/* A byte from fd within `ms`, or 0 (the writer died or hangs). */
static char reply_within(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char c = 0;

	if (poll(&pf, 1, ms) == 1 && read(fd, &c, 1) != 1)
		c = 0;
	return c;
}

/* The exit status of `pid` within 5 s, or -1. */
static int reaped(pid_t pid)
{
	int status;

	for (int i = 0; i < 500; i++) {
		pid_t got = waitpid(pid, &status, WNOHANG);

		if (got == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		if (got < 0)
			return -1;
		usleep(10000);
	}
	return -1;
}

/* delete_module(2) without waiting: 0 or -errno. */
static int module_unload(void)
{
	return syscall(SYS_delete_module, "mrmon", O_NONBLOCK) ? -errno : 0;
}

static int module_load(void)
{
	const char *build = getenv("MRC_TEST_BUILD");
	char path[512];
	int fd, rc = 0;

	if (!build)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/kmod/mrmon.ko", build);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		rc = -errno;
	close(fd);
	for (int i = 0; !rc && i < 100 && access("/dev/mrmon", F_OK); i++)
		usleep(10000);
	printf("mrmon loaded again from %s: %s\n", path, strerror(-rc));
	return rc;
}

/*
 * Attempts until the budget is spent or the count goes wrong.  Before each
 * one the count is back at `base` (no put still deferred); while the
 * child's descriptor is open it must be above it.
 */
static void attempts(long base, char *page)
{
	int got[GOT_ERROR + 1] = { 0 }, n, bad = 0;
	double t0 = priv_now();
	long refs = base, refs_open = base + 1;

	for (n = 0; n < ATTEMPTS && priv_now() - t0 < BUDGET_S && !bad; n++) {
		got[attempt(page, &refs_open)]++;
		refs = refs_settled(base);
		bad = refs_open <= base || refs != base;
	}
	printf("%d attempts under SIGUSR1 in %.1f s: EINTR from SETUP %d, from WATCH %d, "
	       "completed %d, other errors %d\n", n, priv_now() - t0, got[GOT_EINTR_SETUP],
	       got[GOT_EINTR_WATCH], got[GOT_NONE], got[GOT_ERROR]);
	if (bad)
		printf("attempt %d: module refs %ld with its descriptor open, %ld after (before: %ld); "
		       "stopped there\n", n, refs_open, refs, base);
	/* Without an EINTR the path under test never ran. */
	CHECK(got[GOT_EINTR_SETUP] + got[GOT_EINTR_WATCH] > 0);
	CHECK_EQ(got[GOT_ERROR], 0);
	CHECK(refs_open > base);
	CHECK_EQ(refs, base);
}

int main(void)
{
	int cmd[2], reply[2], fd, unloaded = 0;
	char *page = mon_map_anon(PAGE);
	long refs0 = priv_module_refs(), base, refs;
	cpu_set_t set;
	pid_t hold;
	int k = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (refs0 == LONG_MIN)
		SKIP("mrmon is not loaded");
	if (geteuid() != 0)
		SKIP("needs root (delete_module, finit_module)");
	CHECK_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &set))
			*(k++ ? &cpu_child : &cpu_sender) = c;
	if (k < 2)
		SKIP("needs two CPUs");
	CHECK(page != NULL);
	CHECK(pipe(cmd) == 0 && pipe(reply) == 0);
	hold = fork();
	if (hold == 0)
		holder(cmd[0], reply[1]);
	CHECK_EQ(reply_within(reply[0], 10000), 'r');
	base = refs_settled(LONG_MIN);
	printf("module refs: %ld alone, %ld with the holder's live watch\n", refs0, base);
	CHECK(base > refs0);

	/* Control: the count sees one more descriptor. */
	fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_EQ(priv_module_refs(), base + 1);
	close(fd);

	pin_self(cpu_sender);
	attempts(base, page);

	refs = priv_module_refs();
	if (refs >= 0) {	/* below 0, delete_module() would hit BUG_ON */
		int rc = module_unload();

		unloaded = rc == 0;
		printf("delete_module with a live watch (refs %ld): %s\n", refs,
		       rc ? strerror(-rc) : "unloaded");
		CHECK(rc == -EBUSY || rc == -EAGAIN);
	}
	CHECK_EQ(write(cmd[1], "d", 1), 1);
	CHECK_EQ(reply_within(reply[0], 10000), 'i');
	CHECK_EQ(write(cmd[1], "q", 1), 1);
	CHECK_EQ(reaped(hold), 0);
	if (unloaded)
		CHECK_EQ(module_load(), 0);

	/* Control: with the holder gone nothing pins the module. */
	refs = refs_settled(LONG_MIN);
	CHECK_EQ(refs, refs0);
	if (refs == 0 && !test_failures && getenv("MRC_TEST_BUILD")) {
		struct mon m;

		CHECK_EQ(module_unload(), 0);
		CHECK_EQ(module_load(), 0);
		CHECK_EQ(mon_open(&m, 1, 1), 0);
		mon_close(&m);
	}
	return test_result();
}
