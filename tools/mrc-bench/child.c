/* SPDX-License-Identifier: MIT */
/*
 * child.c - one measurement in a process of its own.
 *
 * Hooks a peer installs (UCX patches libc's munmap, mrcache's hooks monitor
 * interposes it) stay in that process; memory deltas belong to one cache;
 * a peer that hangs or crashes costs one sample, not the run.  The child's
 * stdout and stderr go to a memfd so that the reason a peer cannot start (mrcache
 * logs it) comes back with the sample.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

#define CHILD_TIMEOUT_S 300

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

static void child_body(const struct workload *w,
		       const struct bench_peer *proto, long param,
		       const struct bench_opts *o, struct bench_sample *s,
		       int errfd)
{
	struct bench_peer peer = *proto;
	struct bench_pins pins;
	int ret;

	peer.pin = w->uring ? PIN_URING : PIN_NOOP;
	peer.pins = &pins;
	ret = pins_open(&pins, peer.pin, 4096);
	if (ret < 0) {
		s->status = ret;
		snprintf(s->why, sizeof(s->why), "io_uring: %s", strerror(-ret));
		return;
	}
	ret = peer.ops->open(&peer);
	if (ret < 0) {
		s->status = ret;
		if (peer.why[0])
			snprintf(s->why, sizeof(s->why), "%s", peer.why);
		else
			last_line(errfd, s->why, sizeof(s->why));
		if (!s->why[0])
			snprintf(s->why, sizeof(s->why), "%s", strerror(-ret));
		pins_close(&pins);
		return;
	}
	ret = w->run(&peer, param, o, s->v);
	if (ret < 0) {
		s->status = ret;
		if (peer.why[0])
			snprintf(s->why, sizeof(s->why), "%s", peer.why);
		else
			snprintf(s->why, sizeof(s->why), "run failed: %s",
				 strerror(-ret));
	}
	peer.ops->close(&peer);
	pins_close(&pins);
}

void child_run(const struct workload *w, const struct bench_peer *proto,
	       long param, const struct bench_opts *o,
	       struct bench_sample *out)
{
	int pfd[2], status;
	ssize_t n;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	fflush(NULL);
	if (pipe(pfd) < 0) {
		out->status = -errno;
		snprintf(out->why, sizeof(out->why), "pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		out->status = -errno;
		snprintf(out->why, sizeof(out->why), "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	if (pid == 0) {
		struct bench_sample s = { 0 };
		int errfd = memfd_create("mrc-bench-stderr", 0);

		close(pfd[0]);
		if (errfd >= 0 && !o->verbose) {
			dup2(errfd, 1);		/* UCX logs to stdout */
			dup2(errfd, 2);
		}
		alarm(CHILD_TIMEOUT_S);
		child_body(w, proto, param, o, &s, errfd);
		fflush(NULL);
		if (write(pfd[1], &s, sizeof(s)) != (ssize_t)sizeof(s))
			_exit(2);
		_exit(0);
	}
	close(pfd[1]);
	n = read(pfd[0], out, sizeof(*out));
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(*out)) {
		memset(out, 0, sizeof(*out));
		out->status = -ECHILD;
		if (WIFSIGNALED(status))
			snprintf(out->why, sizeof(out->why),
				 "measurement died: signal %d (%s)",
				 WTERMSIG(status), strsignal(WTERMSIG(status)));
		else
			snprintf(out->why, sizeof(out->why),
				 "measurement exited %d without a result",
				 WEXITSTATUS(status));
	}
}
