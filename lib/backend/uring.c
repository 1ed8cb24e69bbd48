/* SPDX-License-Identifier: MIT */
/*
 * lib/backend/uring.c - io_uring fixed buffers as registrations.
 *
 * open() registers a sparse buffer table of uring_slots entries on the
 * caller's ring; reg() fills one free slot with IORING_REGISTER_BUFFERS_UPDATE
 * (the kernel pins the pages with a long-term pin, as ibv_reg_mr does) and
 * returns its index as the key, ready for IORING_OP_READ_FIXED and
 * WRITE_FIXED; dereg() empties the slot.
 *
 * Limits, from the kernel: 16384 slots per ring, 1 GiB per buffer, pinned
 * pages charged to RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK
 * (exceeding it gives -ENOMEM).  A full table gives -ENOSPC.  Both are
 * resource errors: the cache evicts unused regions and retries.
 *
 * No update tags: a tagged slot posts a CQE on the application's ring when
 * the kernel drops the buffer, and that ring is not ours to fill.
 *
 * With MRCACHE_FLAG_URING_SLOTS the table is the caller's: it registered a
 * sparse table (io_uring_register_buffers_sparse()) for its own fixed
 * buffers too and gives the cache the slots [first, first + n).  open()
 * empties that range in one update, which also checks that the table
 * exists and holds it (-ENXIO, -EINVAL otherwise); close() empties it
 * again and leaves the table registered.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <liburing.h>
#include "backend/backend.h"
#include "monitor/monitor.h"	/* mrc_log */

#define URING_DEFAULT_SLOTS	1024u
#define URING_MAX_SLOTS		16384u		/* IORING_MAX_REG_BUFFERS */
#define URING_MAX_BUFFER	(1ul << 30)	/* the kernel's per-buffer limit */

struct uring_backend {
	struct mrc_backend base;
	struct io_uring *ring;
	unsigned first, slots;		/* keys are first .. first + slots - 1 */
	int own_table;			/* registered by open(), not the caller */
	/* lock (leaf; reg and dereg come from any thread, the kernel
	 * serialises the updates themselves): guards nfree and free_idx, a
	 * stack of the empty slot indexes.  Held for a push or a pop only. */
	pthread_mutex_t lock;
	unsigned nfree;
	unsigned free_idx[];
};

static struct uring_backend *ub_of(struct mrc_backend *be)
{
	return (struct uring_backend *)be;
}

static int ub_pop(struct uring_backend *ub, unsigned *idx)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&ub->lock);
	if (ub->nfree) {
		*idx = ub->free_idx[--ub->nfree];
		ret = 0;
	}
	pthread_mutex_unlock(&ub->lock);
	return ret;
}

static void ub_push(struct uring_backend *ub, unsigned idx)
{
	pthread_mutex_lock(&ub->lock);
	ub->free_idx[ub->nfree++] = idx;
	pthread_mutex_unlock(&ub->lock);
}

/* Empty the slots [first, first + n) in one update. */
static int ub_clear_range(struct io_uring *ring, unsigned first, unsigned n)
{
	struct iovec *iov = calloc(n, sizeof(*iov));
	int ret;

	if (!iov)
		return -ENOMEM;
	ret = io_uring_register_buffers_update_tag(ring, first, iov, NULL, n);
	free(iov);
	if (ret >= 0 && (unsigned)ret != n)
		ret = -EIO;
	return ret < 0 ? ret : 0;
}

/* The table: ours (sparse, `slots` entries), or the caller's range. */
static int ub_table(const struct mrcache_config *cfg, unsigned slots)
{
	int ret;

	if (cfg->flags & MRCACHE_FLAG_URING_SLOTS) {
		if (cfg->uring_first_slot > URING_MAX_SLOTS - slots) {
			mrc_log(0, "uring backend: slots [%u, %u + %u) pass the kernel's %u per ring",
				cfg->uring_first_slot, cfg->uring_first_slot, slots, URING_MAX_SLOTS);
			return -EINVAL;
		}
		ret = ub_clear_range(cfg->ring, cfg->uring_first_slot, slots);
		if (ret == -ENXIO)
			mrc_log(0, "uring backend: MRCACHE_FLAG_URING_SLOTS but the ring has no buffer table; register one with io_uring_register_buffers_sparse()");
		else if (ret)
			mrc_log(0, "uring backend: slots [%u, %u) are not all in the ring's table: %d",
				cfg->uring_first_slot, cfg->uring_first_slot + slots, ret);
		return ret;
	}
	if (cfg->uring_first_slot) {
		mrc_log(0, "uring backend: uring_first_slot needs MRCACHE_FLAG_URING_SLOTS");
		return -EINVAL;
	}
	ret = io_uring_register_buffers_sparse(cfg->ring, slots);
	if (ret == -EBUSY)
		mrc_log(0, "uring backend: the ring already has registered buffers; give the cache a ring of its own, or a range of its table (MRCACHE_FLAG_URING_SLOTS)");
	else if (ret < 0)
		mrc_log(0, "uring backend: registering a sparse table of %u buffers: %d",
			slots, ret);
	return ret < 0 ? ret : 0;
}

static int ub_open(const struct mrcache_config *cfg, struct mrc_backend **out)
{
	unsigned slots = cfg->uring_slots ? cfg->uring_slots : URING_DEFAULT_SLOTS;
	struct uring_backend *ub;
	int ret;

	if (!cfg->ring) {
		mrc_log(0, "uring backend: config.ring must be an initialised io_uring");
		return -EINVAL;
	}
	if (slots > URING_MAX_SLOTS) {
		mrc_log(0, "uring backend: uring_slots %u exceeds the kernel's %u per ring",
			slots, URING_MAX_SLOTS);
		return -EINVAL;
	}
	ub = calloc(1, sizeof(*ub) + slots * sizeof(ub->free_idx[0]));
	if (!ub)
		return -ENOMEM;
	ret = ub_table(cfg, slots);
	if (ret) {
		free(ub);
		return ret;
	}
	ub->base.ops = &mrc_backend_uring_ops;
	ub->base.max_len = URING_MAX_BUFFER;
	ub->ring = cfg->ring;
	ub->own_table = !(cfg->flags & MRCACHE_FLAG_URING_SLOTS);
	ub->first = ub->own_table ? 0 : cfg->uring_first_slot;
	ub->slots = slots;
	pthread_mutex_init(&ub->lock, NULL);
	/* Lowest index on top: small keys first makes traces easier to read. */
	for (unsigned i = 0; i < slots; i++)
		ub->free_idx[i] = ub->first + slots - 1 - i;
	ub->nfree = slots;
	*out = &ub->base;
	return 0;
}

static void ub_close(struct mrc_backend *be)
{
	struct uring_backend *ub = ub_of(be);

	if (ub->own_table)
		io_uring_unregister_buffers(ub->ring);
	else
		ub_clear_range(ub->ring, ub->first, ub->slots);
	pthread_mutex_destroy(&ub->lock);
	free(ub);
}

static int ub_update(struct uring_backend *ub, unsigned idx, void *addr,
		     size_t len)
{
	struct iovec iov = { .iov_base = addr, .iov_len = len };
	int ret;

	ret = io_uring_register_buffers_update_tag(ub->ring, idx, &iov, NULL, 1);
	if (ret == 1)
		return 0;
	return ret < 0 ? ret : -EIO;
}

/* The kernel's refusals, in words a user can act on. */
static void ub_explain(int err, void *addr, size_t len)
{
	switch (err) {
	case -ENOMEM:
		mrc_log(1, "uring backend: pinning %zu bytes failed: RLIMIT_MEMLOCK or memory exhausted",
			len);
		break;
	case -EFAULT:
		mrc_log(1, "uring backend: [%p, +%zu) cannot be pinned: not mapped, or a shared mapping of a regular file",
			addr, len);
		break;
	case -EEXIST:
		mrc_log(0, "uring backend: the ring was set up with IORING_SETUP_SINGLE_ISSUER; only its submitter thread may register buffers");
		break;
	}
}

static int ub_reg(struct mrc_backend *be, void *addr, size_t len,
		  unsigned access, uint64_t flags, struct mrc_reg *out, void **user)
{
	struct uring_backend *ub = ub_of(be);
	unsigned idx;
	int ret;

	if (!len)
		return -EINVAL;
	if (len > URING_MAX_BUFFER) {
		mrc_log(0, "uring backend: %zu bytes at %p exceed io_uring's 1 GiB per buffer",
			len, addr);
		return -E2BIG;
	}
	ret = ub_pop(ub, &idx);
	if (ret) {
		mrc_log(2, "uring backend: all %u slots in use", ub->slots);
		return ret;
	}
	ret = ub_update(ub, idx, addr, len);
	if (ret) {
		ub_push(ub, idx);
		ub_explain(ret, addr, len);
		return ret;
	}
	out->handle = NULL;
	out->key = idx;
	out->rkey = 0;
	return 0;
}

/* The kernel keeps the old pages until I/O already using the slot ends. */
static int ub_dereg(struct mrc_backend *be, struct mrc_reg *reg)
{
	struct uring_backend *ub = ub_of(be);
	unsigned idx = (unsigned)reg->key;
	int ret;

	if (reg->key < ub->first || reg->key - ub->first >= ub->slots)
		return -EINVAL;
	ret = ub_update(ub, idx, NULL, 0);
	if (ret) {
		mrc_log(0, "uring backend: emptying slot %u failed: %d", idx, ret);
		return ret;
	}
	ub_push(ub, idx);
	return 0;
}

const struct mrc_backend_ops mrc_backend_uring_ops = {
	.name = "uring",
	.open = ub_open,
	.close = ub_close,
	.reg = ub_reg,
	.dereg = ub_dereg,
};
