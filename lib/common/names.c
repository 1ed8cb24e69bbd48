/* SPDX-License-Identifier: MIT */
/* names.c - the names users type and read for monitors and causes.
 * Parsing ignores case: MRCACHE_MONITOR=UFFD means uffd. */
#include <errno.h>
#include <strings.h>
#include "mrcache.h"

static const char *const monitor_names[MRCACHE_MONITOR_COUNT_] = {
	[MRCACHE_MONITOR_AUTO] = "auto",
	[MRCACHE_MONITOR_NONE] = "none",
	[MRCACHE_MONITOR_KERNEL] = "kernel",
	[MRCACHE_MONITOR_BPF] = "bpf",
	[MRCACHE_MONITOR_UFFD] = "uffd",
	[MRCACHE_MONITOR_HOOKS] = "hooks",
};

static const char *const cause_names[MRCACHE_CAUSE_COUNT_] = {
	[MRCACHE_CAUSE_MANUAL] = "manual",
	[MRCACHE_CAUSE_UNMAP] = "unmap",
	[MRCACHE_CAUSE_REMAP] = "remap",
	[MRCACHE_CAUSE_DISCARD] = "discard",
	[MRCACHE_CAUSE_EXIT] = "exit",
	[MRCACHE_CAUSE_OVERFLOW] = "overflow",
	[MRCACHE_CAUSE_OTHER] = "other",
};

const char *mrcache_monitor_name(enum mrcache_monitor_kind kind)
{
	if ((unsigned)kind >= MRCACHE_MONITOR_COUNT_)
		return "invalid";
	return monitor_names[kind];
}

int mrcache_monitor_parse(const char *name, enum mrcache_monitor_kind *out)
{
	if (!name || !out)
		return -EINVAL;
	for (unsigned i = 0; i < MRCACHE_MONITOR_COUNT_; i++) {
		if (strcasecmp(name, monitor_names[i]) == 0) {
			*out = (enum mrcache_monitor_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *mrcache_cause_name(enum mrcache_cause cause)
{
	if ((unsigned)cause >= MRCACHE_CAUSE_COUNT_)
		return "invalid";
	return cause_names[cause];
}
