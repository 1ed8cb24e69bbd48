/* SPDX-License-Identifier: MIT */
/* monitor_uffd.c - placeholder until the uffd monitor lands: reports -ENOTSUP. */
#include <errno.h>
#include "monitor.h"

static int uffd_start(struct mrcache *cache, struct mrc_monitor **out)
{
	mrc_log(1, "monitor uffd: not built in this tree");
	return -ENOTSUP;
}

const struct mrc_monitor_ops mrc_monitor_uffd_ops = {
	.kind = MRCACHE_MONITOR_UFFD,
	.name = "uffd",
	.start = uffd_start,
};
