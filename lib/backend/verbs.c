/* SPDX-License-Identifier: MIT */
/*
 * lib/backend/verbs.c - ibverbs memory regions as registrations.
 *
 * reg() is ibv_reg_mr() on the caller's protection domain: the region's
 * handle is the struct ibv_mr *, its key the lkey, its rkey the rkey.
 * dereg() is ibv_dereg_mr().  Both are thread-safe in libibverbs, so the
 * backend keeps no state but the PD and needs no lock.
 *
 * ibv_reg_mr() reports failure as NULL and errno.  Running out of pinnable
 * memory (RLIMIT_MEMLOCK without CAP_IPC_LOCK gives ENOMEM), of MR table
 * entries (ENOMEM or ENOSPC, by device) or a busy device (EAGAIN) are
 * resource errors for mrc_backend_resource_error(): the cache evicts
 * unused regions and retries.  EFAULT (the range is not mapped), EINVAL
 * and EACCES (access the mapping or the device cannot give) pass through.
 *
 * libmrcache does not link libibverbs (lib/common/dl.h): open() loads
 * libibverbs.so.1 and resolves the two functions it calls.  The program
 * that hands us a protection domain has loaded it already, so this finds
 * that copy; without it open() fails with -EOPNOTSUPP saying so.  Built
 * only with -DMRC_HAVE_VERBS (mk/verbs.mk, when pkg-config finds the
 * headers); otherwise open() says so and returns -ENOTSUP.
 */
#include <errno.h>
#include "backend/backend.h"
#include "monitor/monitor.h"	/* mrc_log */

#ifdef MRC_HAVE_VERBS
#include <stdlib.h>
#include <infiniband/verbs.h>
#include "common/dl.h"

MRC_DL_NOTE(mrc_dl_note_libibverbs, "verbs-backend",
	    "the verbs backend (MRCACHE_BACKEND_VERBS)", "suggested", "libibverbs.so.1");

/* The versions <infiniband/verbs.h> binds the two names to. */
static struct {
	__typeof__(ibv_dereg_mr) *dereg_mr;
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access);
} ibv;

static const struct mrc_dl_sym ibv_syms[] = {
	{ "ibv_reg_mr", "IBVERBS_1.1", (void **)&ibv.reg_mr },
	{ "ibv_dereg_mr", "IBVERBS_1.1", (void **)&ibv.dereg_mr },
	{ NULL, NULL, NULL }
};

static const struct mrc_dl_lib libibverbs = {
	.what = "verbs backend",
	.soname = "libibverbs.so.1",
	.package = "libibverbs1",
	.syms = ibv_syms,
};

struct verbs_backend {
	struct mrc_backend base;
	struct ibv_pd *pd;
};

static struct verbs_backend *vb_of(struct mrc_backend *be)
{
	return (struct verbs_backend *)be;
}

/*
 * Backend flags (MRCACHE_VERBS_FLAGS, IBV_ACCESS_RELAXED_ORDERING and the
 * rest of IBV_ACCESS_OPTIONAL_RANGE) are or'ed in as they are.
 *
 * MRCACHE_ACCESS_* to IBV_ACCESS_*.  Verbs rejects remote write and remote
 * atomic without local write (EINVAL), so those imply it: a cached region
 * then also serves later local-write requests, which is harmless.
 */
static int verbs_access(unsigned access)
{
	int flags = 0;

	if (access & MRCACHE_ACCESS_LOCAL_WRITE)
		flags |= IBV_ACCESS_LOCAL_WRITE;
	if (access & MRCACHE_ACCESS_REMOTE_WRITE)
		flags |= IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (access & MRCACHE_ACCESS_REMOTE_READ)
		flags |= IBV_ACCESS_REMOTE_READ;
	if (access & MRCACHE_ACCESS_REMOTE_ATOMIC)
		flags |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	return flags;
}

static int vb_open(const struct mrcache_config *cfg, struct mrc_backend **out)
{
	struct verbs_backend *vb;
	int err;

	if (!cfg->pd) {
		mrc_log(0, "verbs backend: config.pd must be a protection domain from ibv_alloc_pd()");
		return -EINVAL;
	}
	err = mrc_dl_load(&libibverbs);
	if (err)
		return err;
	vb = calloc(1, sizeof(*vb));
	if (!vb)
		return -ENOMEM;
	vb->base.ops = &mrc_backend_verbs_ops;
	/* Optional flags: a device without the feature ignores them, so
	 * libibverbs passes them on unchecked (ibv_reg_mr's man page). */
	vb->base.flags_ok = MRCACHE_VERBS_FLAGS;
	vb->pd = cfg->pd;
	*out = &vb->base;
	return 0;
}

static void vb_close(struct mrc_backend *be)
{
	free(vb_of(be));
}

static int vb_reg(struct mrc_backend *be, void *addr, size_t len,
		  unsigned access, uint64_t flags, struct mrc_reg *out, void **user)
{
	struct verbs_backend *vb = vb_of(be);
	struct ibv_mr *mr;
	int err;

	if (!len || (access & ~MRCACHE_ACCESS_ALL) || (flags & ~MRCACHE_VERBS_FLAGS))
		return -EINVAL;
	errno = 0;
	mr = ibv.reg_mr(vb->pd, addr, len, verbs_access(access) | (int)flags);
	if (!mr) {
		/* A provider that forgets errno must not look like success. */
		err = errno ? errno : EIO;
		if (mrc_backend_resource_error(err))
			mrc_log(1, "verbs backend: ibv_reg_mr of %zu bytes at %p: out of resources (errno %d; RLIMIT_MEMLOCK or the device's MR limit)",
				len, addr, err);
		else
			mrc_log(2, "verbs backend: ibv_reg_mr of %zu bytes at %p failed: errno %d",
				len, addr, err);
		return -err;
	}
	out->handle = mr;
	out->key = mr->lkey;
	out->rkey = mr->rkey;
	return 0;
}

static int vb_dereg(struct mrc_backend *be, struct mrc_reg *reg)
{
	int ret;

	if (!reg->handle)
		return -EINVAL;
	/* ibv_dereg_mr returns a positive errno (and sets errno) on failure. */
	ret = ibv.dereg_mr(reg->handle);
	if (ret) {
		ret = ret > 0 ? -ret : (errno ? -errno : -EIO);
		mrc_log(0, "verbs backend: ibv_dereg_mr failed: %d", ret);
		return ret;
	}
	reg->handle = NULL;
	return 0;
}

const struct mrc_backend_ops mrc_backend_verbs_ops = {
	.name = "verbs",
	.open = vb_open,
	.close = vb_close,
	.reg = vb_reg,
	.dereg = vb_dereg,
};

#else /* !MRC_HAVE_VERBS */

static int vb_open(const struct mrcache_config *cfg, struct mrc_backend **out)
{
	mrc_log(0, "verbs backend: libmrcache was built without libibverbs (install libibverbs-dev and rebuild)");
	return -ENOTSUP;
}

const struct mrc_backend_ops mrc_backend_verbs_ops = {
	.name = "verbs",
	.open = vb_open,
};

#endif
