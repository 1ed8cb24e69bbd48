/* SPDX-License-Identifier: MIT */
/*
 * preload.c - libmrc-audit's life: options from the environment (the
 * front end mrc-audit(1) sets them; LD_PRELOAD users set them by hand),
 * the witness, a reporter thread, the report at exit and on signals, and
 * what a forked child does.
 *
 *   MRC_AUDIT_JSON=1       the report in JSON
 *   MRC_AUDIT_FATAL=1      SIGTRAP at the first stale use
 *   MRC_AUDIT_OUTPUT=PATH  append the report to PATH (%p: the pid), not stderr
 *   MRC_AUDIT_SIGNAL=SIG   report (and go on) on SIG: a number, USR1, USR2,
 *                          or none (default USR2)
 *
 * SIGINT and SIGTERM also report, then end the program as they would have,
 * when the program left them at their default at start-up.  Signal
 * handlers only wake the reporter thread (a pipe), which takes the lock
 * and writes; a terminating handler waits for it at most two seconds.
 */
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "audit.h"

struct mra_state mra = { .lock = PTHREAD_MUTEX_INITIALIZER, .w = { .fd = -1 } };
const uint64_t mra_word_valid = MRMON_WORD_VALID;

static pthread_once_t mra_once = PTHREAD_ONCE_INIT;
static __thread struct mra_tcount *mra_tc;
static int mra_pipe[2] = { -1, -1 };
static volatile sig_atomic_t mra_reports_done;

uint64_t mra_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct mra_tcount *mra_tcount(void)
{
	struct mra_tcount *c = mra_tc;
	static struct mra_tcount spare;	/* when calloc fails: shared, racy counts */

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return &spare;
	pthread_mutex_lock(&mra.lock);
	c->next = mra.counts;
	mra.counts = c;
	pthread_mutex_unlock(&mra.lock);
	return mra_tc = c;
}

static int mra_signal_parse(const char *s)
{
	char *end;
	long n;

	if (!strcmp(s, "none") || !strcmp(s, "0"))
		return 0;
	if (!strncmp(s, "SIG", 3))
		s += 3;
	if (!strcmp(s, "USR1"))
		return SIGUSR1;
	if (!strcmp(s, "USR2"))
		return SIGUSR2;
	n = strtol(s, &end, 10);
	return *s && !*end && n > 0 && n < NSIG ? (int)n : -1;
}

static bool mra_env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

static void mra_opts_read(void)
{
	const char *v;

	mra.opts.json = mra_env_on("MRC_AUDIT_JSON");
	mra.opts.fatal = mra_env_on("MRC_AUDIT_FATAL");
	v = getenv("MRC_AUDIT_OUTPUT");
	if (v)
		snprintf(mra.opts.output, sizeof(mra.opts.output), "%s", v);
	mra.opts.signal = SIGUSR2;
	v = getenv("MRC_AUDIT_SIGNAL");
	if (v && (mra.opts.signal = mra_signal_parse(v)) < 0) {
		fprintf(stderr, "mrc-audit: MRC_AUDIT_SIGNAL=%s: not a signal (USR1, USR2, a number or none); using none\n", v);
		mra.opts.signal = 0;
	}
}

/* The report, to MRC_AUDIT_OUTPUT (appended) or stderr.  Under mra.lock. */
static void mra_report_write(const char *why)
{
	char path[sizeof(mra.opts.output) + 32];
	const char *o = mra.opts.output;
	size_t n = 0;
	FILE *f;

	if (!*o) {
		mra_report(stderr, mra.opts.json, why);
		return;
	}
	for (; *o && n < sizeof(path) - 24; o++) {
		if (o[0] == '%' && o[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%d", (int)getpid());
			o++;
		} else {
			path[n++] = *o;
		}
	}
	path[n] = 0;
	f = fopen(path, "ae");
	if (!f) {
		fprintf(stderr, "mrc-audit: %s: %s; the report goes to stderr\n", path, strerror(errno));
		f = stderr;
	}
	mra_report(f, mra.opts.json, why);
	if (f != stderr)
		fclose(f);
}

static void mra_events_and_signals(void)
{
	struct pollfd p[2] = { { .fd = mra_pipe[0], .events = POLLIN },
			       { .fd = mra.w.fd, .events = POLLIN } };
	char why[32];
	int sig;

	if (poll(p, mra.w.fd >= 0 ? 2 : 1, -1) <= 0)
		return;
	if (p[1].revents) {
		pthread_mutex_lock(&mra.lock);
		mra_events_drain();
		pthread_mutex_unlock(&mra.lock);
	}
	if (p[0].revents && read(mra_pipe[0], &sig, sizeof(sig)) == sizeof(sig)) {
		snprintf(why, sizeof(why), "signal %s", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		pthread_mutex_lock(&mra.lock);
		mra_report_write(why);
		pthread_mutex_unlock(&mra.lock);
		mra_reports_done++;
	}
	if (p[1].revents & (POLLERR | POLLHUP | POLLNVAL))
		mra.w.fd = -1;	/* not ours any more; stop polling it */
}

/* Reads the witness's events as they come (their time is the time of the
 * invalidation, to the thread's wake-up), and writes signalled reports. */
static void *mra_reporter(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;)
		mra_events_and_signals();
	return NULL;
}

static void mra_on_signal(int sig)
{
	int err = errno;
	sig_atomic_t before = mra_reports_done;
	struct timespec tick = { 0, 10000000 };

	if (write(mra_pipe[1], &sig, sizeof(sig)) < 0)
		goto out;
	if (sig == SIGINT || sig == SIGTERM) {
		for (int i = 0; i < 200 && mra_reports_done == before; i++)
			nanosleep(&tick, NULL);
		signal(sig, SIG_DFL);
		raise(sig);
	}
out:
	errno = err;
}

static void mra_catch(int sig)
{
	struct sigaction old, sa = { .sa_handler = mra_on_signal, .sa_flags = SA_RESTART };

	if (sigaction(sig, NULL, &old) || old.sa_handler != SIG_DFL)
		return;		/* the program's, or ignored */
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* A forked child cannot use the parent's descriptor (EPERM) and has none
 * of its own: it runs unaudited and reports nothing (an exec starts a new
 * audit). */
static void mra_atfork_child(void)
{
	mra.child = true;
	mra.w.fd = -1;
	mra.w.kind = MRA_WITNESS_NONE;
	pthread_mutex_init(&mra.lock, NULL);
}

static void mra_program_name(void)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, mra.prog, sizeof(mra.prog) - 1) : -1;

	if (fd >= 0)
		close(fd);
	mra.prog[n > 0 ? n : 0] = 0;
}

static void mra_init_once(void)
{
	void *frame[2];
	pthread_t t;

	mra.start_ns = mra_now();
	mra_program_name();
	mra_opts_read();
	backtrace(frame, 2);	/* loads libgcc_s now, not inside a registration */
	mra_witness_open();
	mra_pages_open();
	pthread_atfork(NULL, NULL, mra_atfork_child);
	if (pipe2(mra_pipe, O_CLOEXEC | O_NONBLOCK) == 0 &&
	    pthread_create(&t, NULL, mra_reporter, NULL) == 0) {
		pthread_detach(t);
		if (mra.opts.signal)
			mra_catch(mra.opts.signal);
		mra_catch(SIGINT);
		mra_catch(SIGTERM);
	}
	mra.ready = true;
}

void mra_init(void)
{
	pthread_once(&mra_once, mra_init_once);
}

__attribute__((constructor)) static void mra_start(void)
{
	mra_init();
}

__attribute__((destructor)) static void mra_exit(void)
{
	if (mra.child || !mra.ready)
		return;
	pthread_mutex_lock(&mra.lock);
	mra_events_drain();
	mra_report_write("exit");
	pthread_mutex_unlock(&mra.lock);
}
