/* SPDX-License-Identifier: MIT */
/*
 * backend_verbs.c - placeholder until the ibverbs backend lands: a verbs
 * cache reports -ENOTSUP with a message instead of failing to link.
 */
#include <errno.h>
#include "backend.h"
#include "monitor.h"	/* mrc_log */

static int verbs_open(const struct mrcache_config *cfg, struct mrc_backend **out)
{
	mrc_log(0, "verbs backend: built without libibverbs");
	return -ENOTSUP;
}

const struct mrc_backend_ops mrc_backend_verbs_ops = {
	.name = "verbs",
	.open = verbs_open,
};
