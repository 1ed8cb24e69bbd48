/* SPDX-License-Identifier: MIT */
/* backend.c - pick the backend a config names; classify backend errors. */
#include <errno.h>
#include "backend/backend.h"
#include "monitor/monitor.h"	/* mrc_log */

int mrc_backend_open(const struct mrcache_config *cfg, struct mrc_backend **out)
{
	const struct mrc_backend_ops *ops;

	if (!cfg || !out)
		return -EINVAL;
	switch (cfg->backend) {
	case MRCACHE_BACKEND_CALLBACKS:
		ops = &mrc_backend_callbacks_ops;
		break;
	case MRCACHE_BACKEND_URING:
		ops = &mrc_backend_uring_ops;
		break;
	case MRCACHE_BACKEND_VERBS:
		ops = &mrc_backend_verbs_ops;
		break;
	default:
		mrc_log(0, "unknown backend kind %d", (int)cfg->backend);
		return -EINVAL;
	}
	return ops->open(cfg, out);
}

/*
 * The errors after which evicting unused registrations and trying again can
 * succeed: the backend ran out of pinnable memory (ENOMEM, which is also what
 * RLIMIT_MEMLOCK gives), of table slots (ENOSPC), of descriptors (EMFILE,
 * ENFILE), of the watches mrmon allows one process (EDQUOT), or the device
 * asked us to come back (EAGAIN).
 */
int mrc_backend_resource_error(int err)
{
	switch (err < 0 ? -err : err) {
	case ENOMEM:
	case ENOSPC:
	case EDQUOT:	/* mrmon: the process's max_watches_per_mm */
	case EAGAIN:
	case EMFILE:
	case ENFILE:
		return 1;
	default:
		return 0;
	}
}
