/* SPDX-License-Identifier: MIT */
/* monitor.c - choosing a monitor; `auto` takes the strongest that starts. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
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

/* Kernel-side monitors first: they see raw syscalls and other processes'
 * truncations, and cost nothing on unrelated VM activity. */
static const enum mrcache_monitor_kind auto_order[] = {
	MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_BPF,
	MRCACHE_MONITOR_UFFD, MRCACHE_MONITOR_HOOKS,
};

/*
 * uffd alone cannot keep "a get of memory I just mapped never returns
 * older pages" when another thread unmaps: the kernel queues the unmap
 * event only after munmap/mremap released mmap_lock, so a second thread
 * can map fresh memory at the freed address and get it before the event
 * exists; no drain of the userfaultfd can see it (issue 25, items 2 and
 * 11).  With libmrcache-hooks interposing munmap, mremap and free, the
 * unmapping thread reports synchronously and uffd only adds what the hooks
 * miss.  So `auto` takes uffd only then; MRCACHE_MONITOR=uffd still can.
 */
static int auto_may_take(enum mrcache_monitor_kind kind)
{
	if (kind != MRCACHE_MONITOR_UFFD || hooks_interposed() == 0)
		return 0;
	mrc_log(1, "auto: not monitor uffd: without libmrcache-hooks linked it reports "
		"another thread's munmap/mremap late (a get can return the old pages)");
	return -EOPNOTSUPP;
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

/* Under `auto` a monitor that cannot start here is the normal case (no
 * module, no CAP_BPF): why is a debug message, not an error, unless none
 * starts at all. */
static int start_auto(struct mrcache *cache, struct mrc_monitor **out)
{
	char why[384];
	size_t len = 0;
	int rc = -ENOTSUP;

	why[0] = 0;
	for (unsigned i = 0; i < sizeof(auto_order) / sizeof(auto_order[0]); i++) {
		const char *name = mrcache_monitor_name(auto_order[i]);

		const char *reason;

		rc = auto_may_take(auto_order[i]);
		if (rc) {
			reason = "not without libmrcache-hooks linked";
			goto next;
		}
		mrc_log_quiet(1);
		rc = start_one(cache, auto_order[i], out);
		mrc_log_quiet(0);
		if (rc == 0) {
			mrc_log(1, "auto: using monitor %s", name);
			return 0;
		}
		mrc_log(1, "auto: monitor %s unavailable (%s)", name, strerror(-rc));
		reason = strerror(-rc);
next:
		if (len < sizeof(why))
			len += (size_t)snprintf(why + len, sizeof(why) - len, "%s%s: %s",
						len ? ", " : "", name, reason);
	}
	mrc_log(0, "no monitor could start (%s; MRCACHE_LOG_LEVEL=1 says why); use "
		"monitor \"none\" explicitly to run without one (registrations can then "
		"go stale)", why);
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
