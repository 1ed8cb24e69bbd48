/* SPDX-License-Identifier: MIT */
/*
 * child.c - measurements run in worker processes, one per peer.
 *
 * Hooks a peer installs (UCX patches libc's munmap, mrcache's hooks monitor
 * interposes it) stay in that peer's process; a peer that hangs or crashes
 * costs its rows, not the run.  A worker opens its peer and runs the
 * measurements the parent asks for, which interleaves the peers round by
 * round.  By default every measurement gets a new worker; with --reuse a
 * worker serves them all (a monitor that takes seconds to start then
 * starts once) and empties its cache (mrcache_flush) and zeroes the pin
 * counters between measurements.  Workloads marked `fresh` (memory) always
 * get a worker of their own.
 *
 * A workload may pin glibc's mmap threshold (churn-fixed): the worker does
 * it first, before its own allocations and the peer's open().
 *
 * A worker's stdout and stderr go to a memfd so that the reason a peer
 * cannot start (mrcache logs it, UCX prints to stdout) comes back to the
 * parent instead of into the table.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

#define WORKER_TIMEOUT_S 300	/* per measurement */

struct worker_cmd {
	const struct workload *w;	/* NULL: close the peer and exit */
	long param;
};

static void last_line(int fd, char *buf, size_t len)
{
	char tmp[4096];
	ssize_t n = pread(fd, tmp, sizeof(tmp) - 1, 0);
	char *end, *start;

	if (n <= 0)
		return;
	tmp[n] = 0;
	end = tmp + n;
	while (end > tmp && (end[-1] == '\n' || end[-1] == ' '))
		*--end = 0;
	start = strrchr(tmp, '\n');
	start = start ? start + 1 : tmp;
	if (*start)
		snprintf(buf, len, "%.*s", (int)len - 1, start);
}

static int send_all(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -EPIPE;
}

static int recv_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

static void pins_zero(struct bench_pins *b)
{
	pins_reset(b);
}

static void worker_serve(struct bench_peer *peer, const struct bench_opts *o,
			 int in, int out)
{
	struct worker_cmd c;

	while (recv_all(in, &c, sizeof(c)) == 0 && c.w) {
		struct bench_sample s = { 0 };
		int ret;

		pins_zero(peer->pins);
		peer->why[0] = 0;
		alarm(WORKER_TIMEOUT_S);
		ret = c.w->run(peer, c.param, o, s.v);
		alarm(0);
		if (ret < 0) {
			s.status = ret;
			snprintf(s.why, sizeof(s.why), "%s", peer->why[0] ?
				 peer->why : strerror(-ret));
		}
		if (peer->ops->reset)
			peer->ops->reset(peer);
		fflush(NULL);
		if (send_all(out, &s, sizeof(s)) < 0)
			break;
	}
}

static void worker_main(const struct bench_peer *proto, enum bench_pin pin,
			const struct workload *w, const struct bench_opts *o,
			int in, int out)
{
	struct bench_sample s = { 0 };
	struct bench_peer peer = *proto;
	struct bench_pins pins;
	int errfd;
	uint64_t t0;
	int ret;

	/* First, before any allocation of ours or the peer's. */
	if (w && w->mmap_threshold)
		mallopt(M_MMAP_THRESHOLD, w->mmap_threshold);
	errfd = memfd_create("mrc-bench-output", 0);
	if (errfd >= 0 && !o->verbose) {
		dup2(errfd, 1);
		dup2(errfd, 2);
	}
	peer.pin = pin;
	peer.pins = &pins;
	alarm(WORKER_TIMEOUT_S);
	ret = pins_open(&pins, pin, 4096);
	if (ret < 0) {
		s.status = ret;
		snprintf(s.why, sizeof(s.why), "io_uring: %s", strerror(-ret));
		send_all(out, &s, sizeof(s));
		_exit(0);
	}
	t0 = now_ns();
	ret = peer.ops->open(&peer);
	s.v[0] = (double)(now_ns() - t0) / 1e9;
	alarm(0);
	if (ret < 0) {
		s.status = ret;
		if (peer.why[0])
			snprintf(s.why, sizeof(s.why), "%s", peer.why);
		else
			last_line(errfd, s.why, sizeof(s.why));
		if (!s.why[0])
			snprintf(s.why, sizeof(s.why), "%s", strerror(-ret));
		fflush(NULL);
		send_all(out, &s, sizeof(s));
		_exit(0);
	}
	fflush(NULL);
	if (send_all(out, &s, sizeof(s)) == 0)
		worker_serve(&peer, o, in, out);
	peer.ops->close(&peer);
	pins_close(&pins);
	fflush(NULL);
	_exit(0);
}

static void died(struct worker *wk, struct bench_sample *s)
{
	int status = 0;

	memset(s, 0, sizeof(*s));
	s->status = -ECHILD;
	if (wk->pid > 0)
		while (waitpid(wk->pid, &status, 0) < 0 && errno == EINTR)
			;
	if (WIFSIGNALED(status))
		snprintf(s->why, sizeof(s->why), "measurement died: signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(s->why, sizeof(s->why),
			 "measurement exited %d without a result",
			 WEXITSTATUS(status));
	close(wk->to);
	close(wk->from);
	wk->pid = 0;
}

int worker_start(struct worker *wk, const struct bench_peer *proto,
		 enum bench_pin pin, const struct workload *w,
		 const struct bench_opts *o, struct bench_sample *s)
{
	int to[2], from[2];

	memset(s, 0, sizeof(*s));
	wk->pid = 0;
	fflush(NULL);
	if (pipe(to) < 0)
		goto fail;
	if (pipe(from) < 0) {
		close(to[0]);
		close(to[1]);
		goto fail;
	}
	wk->pid = fork();
	if (wk->pid < 0) {
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		goto fail;
	}
	if (wk->pid == 0) {
		close(to[1]);
		close(from[0]);
		worker_main(proto, pin, w, o, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	wk->to = to[1];
	wk->from = from[0];
	if (recv_all(wk->from, s, sizeof(*s)) < 0) {
		died(wk, s);
		return s->status;
	}
	if (s->status < 0)
		worker_stop(wk);
	return s->status;
fail:
	s->status = -errno;
	snprintf(s->why, sizeof(s->why), "cannot start a worker: %s",
		 strerror(errno));
	wk->pid = 0;
	return s->status;
}

int worker_run(struct worker *wk, const struct workload *w, long param,
	       struct bench_sample *s)
{
	struct worker_cmd c = { .w = w, .param = param };

	if (send_all(wk->to, &c, sizeof(c)) < 0 ||
	    recv_all(wk->from, s, sizeof(*s)) < 0) {
		died(wk, s);
		return s->status;
	}
	return s->status;
}

void worker_stop(struct worker *wk)
{
	struct worker_cmd c = { 0 };

	if (wk->pid <= 0)
		return;
	send_all(wk->to, &c, sizeof(c));
	close(wk->to);
	close(wk->from);
	while (waitpid(wk->pid, NULL, 0) < 0 && errno == EINTR)
		;
	wk->pid = 0;
}
