/* SPDX-License-Identifier: MIT */
/* monitor_kernel.c - placeholder until the kernel monitor lands: reports -ENOTSUP. */
#include <errno.h>
#include "monitor.h"

static int kernel_start(struct mrcache *cache, struct mrc_monitor **out)
{
	mrc_log(1, "monitor kernel: not built in this tree");
	return -ENOTSUP;
}

const struct mrc_monitor_ops mrc_monitor_kernel_ops = {
	.kind = MRCACHE_MONITOR_KERNEL,
	.name = "kernel",
	.start = kernel_start,
};
