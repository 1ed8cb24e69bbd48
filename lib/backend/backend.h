/* SPDX-License-Identifier: MIT */
/*
 * backend.h - how the cache pins memory.
 *
 * A backend registers page-aligned ranges.  Errors that mean "out of
 * resources" (-ENOMEM, -ENOSPC, -EAGAIN, -EMFILE, a full io_uring table)
 * make the cache evict unused regions and retry; mrc_backend_resource_error()
 * is the one place that decides which errors those are.
 */
#ifndef MRC_BACKEND_H
#define MRC_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "mrcache.h"

struct mrc_backend;

struct mrc_reg {		/* one registration, stored in the region */
	void *handle;		/* struct ibv_mr *, callback handle */
	uint64_t key;		/* io_uring index, lkey, callback key */
	uint32_t rkey;
};

struct mrc_backend_ops {
	const char *name;
	int (*open)(const struct mrcache_config *cfg, struct mrc_backend **out);
	void (*close)(struct mrc_backend *be);
	/* *user holds the get's user pointer on entry; reg may change it. */
	int (*reg)(struct mrc_backend *be, void *addr, size_t len,
		   unsigned access, uint64_t flags, struct mrc_reg *out, void **user);
	int (*dereg)(struct mrc_backend *be, struct mrc_reg *reg);
};

struct mrc_backend {
	const struct mrc_backend_ops *ops;
	uint64_t flags_ok;	/* the backend flags reg takes (set by open) */
	uint64_t flags_shared;	/* of those, hints: not part of the key */
	size_t max_len;		/* longest registration; 0: no limit */
};

extern const struct mrc_backend_ops mrc_backend_callbacks_ops;
extern const struct mrc_backend_ops mrc_backend_uring_ops;
extern const struct mrc_backend_ops mrc_backend_verbs_ops;

int mrc_backend_open(const struct mrcache_config *cfg, struct mrc_backend **out);
int mrc_backend_resource_error(int err);

#endif
