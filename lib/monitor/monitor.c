/* SPDX-License-Identifier: MIT */
/* monitor.c - choosing a monitor; `auto` takes the strongest that starts
 * and that it may take here. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/env.h"
#include "common/log.h"
#include "monitor/hooks.h"
#include "monitor/monitor.h"

static const struct mrc_monitor_ops *const monitors[MRCACHE_MONITOR_COUNT_] = {
	[MRCACHE_MONITOR_NONE] = &mrc_monitor_none_ops,
	[MRCACHE_MONITOR_KERNEL] = &mrc_monitor_kernel_ops,
	[MRCACHE_MONITOR_BPF] = &mrc_monitor_bpf_ops,
	[MRCACHE_MONITOR_UFFD] = &mrc_monitor_uffd_ops,
	[MRCACHE_MONITOR_HOOKS] = &mrc_monitor_hooks_ops,
};

/*
 * `auto`'s order (docs/monitors.md, "What auto picks"):
 *  - kernel: sees raw system calls, io_uring and other processes, before
 *    the unmapping call returns, and costs nothing on unrelated activity;
 *  - bpf, only where the administrator set MRCACHE_AUTO_BPF=1: it sees
 *    nearly as much, but its programs, once attached, tax every system
 *    call of every process on the machine (+85-140 ns), which is not for
 *    mrcache_create() to decide because it happens to run as root;
 *  - uffd, only with libmrcache-hooks linked (auto_refuses());
 *  - hooks.
 */
static const enum mrcache_monitor_kind auto_order[] = {
	MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_BPF,
	MRCACHE_MONITOR_UFFD, MRCACHE_MONITOR_HOOKS,
};

/* What the summary line says of the monitor `auto` took. */
static const char *const auto_took[MRCACHE_MONITOR_COUNT_] = {
	[MRCACHE_MONITOR_KERNEL] = "mrmon loaded",
	[MRCACHE_MONITOR_BPF] = "MRCACHE_AUTO_BPF=1",
	[MRCACHE_MONITOR_UFFD] = "libmrcache-hooks linked",
	[MRCACHE_MONITOR_HOOKS] = "libmrcache-hooks linked",
};

/* MRCACHE_AUTO_BPF is the administrator's permission, not the program's
 * configuration: it is read whatever MRCACHE_FLAG_NO_ENV says, as
 * MRCACHE_BPF_VARIANT is, and a program cannot grant it (a bad value
 * fails the create in config.c when the environment is read). */
static const char *auto_bpf_refused(void)
{
	const char *v = getenv("MRCACHE_AUTO_BPF");
	int on;

	if (!v)
		return "not enabled by the administrator: MRCACHE_AUTO_BPF unset";
	if (mrc_parse_bool(v, &on))
		return "not enabled: MRCACHE_AUTO_BPF is not a boolean";
	return on ? NULL : "not enabled by the administrator: MRCACHE_AUTO_BPF=0";
}

/*
 * NULL, or why `auto` does not try `kind` here.
 *
 * uffd alone cannot keep "a get of memory I just mapped never returns
 * older pages" when another thread unmaps: the kernel queues the unmap
 * event only after munmap/mremap released mmap_lock, so a second thread
 * can map fresh memory at the freed address and get it before the event
 * exists; no drain of the userfaultfd can see it (issue 25, items 2 and
 * 11).  With libmrcache-hooks interposing munmap, mremap and free, the
 * unmapping thread reports synchronously and uffd only adds what the hooks
 * miss.  So `auto` takes uffd only then; MRCACHE_MONITOR=uffd still can.
 */
static const char *auto_refuses(enum mrcache_monitor_kind kind)
{
	if (kind == MRCACHE_MONITOR_BPF)
		return auto_bpf_refused();
	if (kind == MRCACHE_MONITOR_UFFD && hooks_interposed())
		return "without libmrcache-hooks linked it reports another thread's "
		       "unmapping late";
	return NULL;
}

static int start_one(struct mrcache *cache, enum mrcache_monitor_kind kind,
		     struct mrc_monitor **out)
{
	const struct mrc_monitor_ops *ops = monitors[kind];
	int rc = ops->start(cache, out);

	if (rc == 0) {
		(*out)->ops = ops;
		(*out)->cache = cache;
	}
	return rc;
}

/* The first thing the monitor said, without its "monitor NAME: " prefix
 * and the advice in parentheses after it; else the errno's text. */
static const char *start_reason(char *said, const char *name, int rc)
{
	size_t n = strlen("monitor ") + strlen(name);
	char *cut;

	if (!strncmp(said, "monitor ", 8) && !strncmp(said + 8, name, strlen(name)) &&
	    !strncmp(said + n, ": ", 2))
		said += n + 2;
	cut = strstr(said, " (");
	if (cut)
		*cut = 0;
	return said[0] ? said : strerror(-rc);
}

static void why_add(char *why, size_t size, size_t *len, const char *name, const char *reason)
{
	if (*len < size)
		*len += (size_t)snprintf(why + *len, size - *len, "; %s: %s", name, reason);
}

/*
 * Under `auto` a monitor that cannot start here is the normal case (no
 * module, no libmrcache-hooks): each one's messages are debug messages,
 * and one line at the info level (MRCACHE_LOG_INFO: nothing below
 * errors is printed unless asked for) says which monitor
 * was taken and why the ones before it were not.  If none starts, that
 * line is the error.
 */
static int start_auto(struct mrcache *cache, struct mrc_monitor **out)
{
	char why[768], said[256];
	size_t len = 0;
	int rc = -ENOTSUP;

	why[0] = 0;
	for (unsigned i = 0; i < sizeof(auto_order) / sizeof(auto_order[0]); i++) {
		enum mrcache_monitor_kind kind = auto_order[i];
		const char *name = mrcache_monitor_name(kind);
		const char *refused = auto_refuses(kind);

		if (refused) {
			rc = -EOPNOTSUPP;
			why_add(why, sizeof(why), &len, name, refused);
			continue;
		}
		mrc_log_quiet(1);
		mrc_log_keep(said, sizeof(said));
		rc = start_one(cache, kind, out);
		mrc_log_keep(NULL, 0);
		mrc_log_quiet(0);
		if (rc == 0) {
			mrc_log(MRCACHE_LOG_INFO, "auto: monitor %s (%s%s)", name, auto_took[kind],
				why);
			return 0;
		}
		why_add(why, sizeof(why), &len, name, start_reason(said, name, rc));
	}
	mrc_log(MRCACHE_LOG_ERROR, "auto: no monitor could start (%s): load the mrmon module, "
		"link libmrcache-hooks (pkg-config --libs mrcache-hooks), or have the "
		"administrator allow bpf with MRCACHE_AUTO_BPF=1; MRCACHE_LOG_LEVEL=1 shows "
		"more; monitor \"none\" runs without one (registrations can then go stale)",
		why[0] ? why + 2 : "");
	return rc;
}

int mrc_monitor_start(struct mrcache *cache, enum mrcache_monitor_kind kind,
		      struct mrc_monitor **out)
{
	int rc;

	if ((unsigned)kind >= MRCACHE_MONITOR_COUNT_)
		return -EINVAL;
	if (kind == MRCACHE_MONITOR_AUTO)
		return start_auto(cache, out);
	rc = start_one(cache, kind, out);
	if (rc)
		mrc_log(0, "monitor %s cannot start: %s", mrcache_monitor_name(kind),
			strerror(-rc));
	return rc;
}
