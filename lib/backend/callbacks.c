/* SPDX-License-Identifier: MIT */
/*
 * lib/backend/callbacks.c - registration through the application's own
 * functions (struct mrcache_backend_ops): how libfabric, UCX or an MPI
 * library plug their memory registration into the cache.
 */
#include <errno.h>
#include <stdlib.h>
#include "backend/backend.h"
#include "monitor/monitor.h"	/* mrc_log */

struct cb_backend {
	struct mrc_backend base;
	const struct mrcache_backend_ops *ops;
	mrcache_reg_ex_fn reg_ex;
	void *arg;
};

static struct cb_backend *cb_of(struct mrc_backend *be)
{
	return (struct cb_backend *)be;
}

static int cb_open(const struct mrcache_config *cfg, struct mrc_backend **out)
{
	struct cb_backend *cb;

	if (!cfg->ops || !(cfg->ops->reg || cfg->reg_ex) || !cfg->ops->dereg) {
		mrc_log(0, "callbacks backend: config.ops must provide reg (or config.reg_ex) and dereg");
		return -EINVAL;
	}
	if ((cfg->backend_flags && !cfg->reg_ex) ||
	    (cfg->backend_flags_shared & ~cfg->backend_flags)) {
		mrc_log(0, "callbacks backend: backend_flags need reg_ex, and backend_flags_shared must be among them");
		return -EINVAL;
	}
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return -ENOMEM;
	cb->base.ops = &mrc_backend_callbacks_ops;
	cb->base.flags_ok = cfg->backend_flags;
	cb->base.flags_shared = cfg->backend_flags_shared;
	cb->ops = cfg->ops;
	cb->reg_ex = cfg->reg_ex;
	cb->arg = cfg->ops_arg;
	*out = &cb->base;
	return 0;
}

static void cb_close(struct mrc_backend *be)
{
	free(cb_of(be));
}

/* The callbacks promise 0 or -errno; anything else is a bug on their side
 * that must not look like success or like a resource shortage. */
static int cb_result(const char *what, int ret)
{
	if (ret > 0) {
		mrc_log(0, "callbacks backend: %s returned %d, expected 0 or -errno",
			what, ret);
		return -EPROTO;
	}
	return ret;
}

static int cb_reg(struct mrc_backend *be, void *addr, size_t len,
		  unsigned access, uint64_t flags, struct mrc_reg *out, void **user)
{
	struct cb_backend *cb = cb_of(be);
	void *handle = NULL, *none = NULL;
	uint64_t key = 0;
	int ret;

	if (!user)
		user = &none;
	if (cb->reg_ex)
		ret = cb_result("reg_ex", cb->reg_ex(cb->arg, addr, len, access, flags,
						     &handle, &key, user));
	else
		ret = cb_result("reg", cb->ops->reg(cb->arg, addr, len, access,
						    &handle, &key));
	if (ret)
		return ret;
	out->handle = handle;
	out->key = key;
	out->rkey = 0;
	return 0;
}

static int cb_dereg(struct mrc_backend *be, struct mrc_reg *reg)
{
	struct cb_backend *cb = cb_of(be);

	return cb_result("dereg", cb->ops->dereg(cb->arg, reg->handle));
}

const struct mrc_backend_ops mrc_backend_callbacks_ops = {
	.name = "callbacks",
	.open = cb_open,
	.close = cb_close,
	.reg = cb_reg,
	.dereg = cb_dereg,
};
