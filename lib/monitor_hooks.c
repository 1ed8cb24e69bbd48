/* SPDX-License-Identifier: MIT */
/* monitor_hooks.c - placeholder until the hooks monitor lands: reports -ENOTSUP. */
#include <errno.h>
#include "monitor.h"

static int hooks_start(struct mrcache *cache, struct mrc_monitor **out)
{
	mrc_log(1, "monitor hooks: not built in this tree");
	return -ENOTSUP;
}

const struct mrc_monitor_ops mrc_monitor_hooks_ops = {
	.kind = MRCACHE_MONITOR_HOOKS,
	.name = "hooks",
	.start = hooks_start,
};
