/* SPDX-License-Identifier: MIT */
/* monitor_bpf.c - placeholder until the bpf monitor lands: reports -ENOTSUP. */
#include <errno.h>
#include "monitor.h"

static int bpf_start(struct mrcache *cache, struct mrc_monitor **out)
{
	mrc_log(1, "monitor bpf: not built in this tree");
	return -ENOTSUP;
}

const struct mrc_monitor_ops mrc_monitor_bpf_ops = {
	.kind = MRCACHE_MONITOR_BPF,
	.name = "bpf",
	.start = bpf_start,
};
