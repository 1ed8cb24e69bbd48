/* SPDX-License-Identifier: MIT */
/*
 * testbackend.h - a callback backend for cache-logic unit tests: counts
 * calls, remembers what is registered, refuses registrations beyond a
 * table size (like a full io_uring table) and injects errors on demand.
 * It pins nothing: it is never the proof that memory is registered.
 */
#ifndef MRC_TEST_BACKEND_H
#define MRC_TEST_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "mrcache.h"

struct test_backend {
	/* lock guards every field below; reg and dereg come from any thread. */
	pthread_mutex_t lock;
	unsigned max_live;	/* 0: unlimited; beyond it reg gives -ENOSPC */
	int fail_err;		/* injected error for the next fail_count regs */
	unsigned fail_count;
	uint64_t regs, deregs;	/* successful calls */
	uint64_t failed_regs;	/* refused or injected */
	uint64_t bad_deregs;	/* handle not live: a cache bug */
	unsigned live;
	size_t live_bytes;
	uint64_t next_key;
	struct test_backend_reg *head; /* live registrations */
};

void test_backend_init(struct test_backend *tb, unsigned max_live);
/* Frees what is still registered; returns how many were (0 = no leak). */
unsigned test_backend_fini(struct test_backend *tb);
/* A config for a cache on this backend, MRCACHE_* variables ignored. */
void test_backend_config(struct test_backend *tb, struct mrcache_config *cfg,
			 enum mrcache_monitor_kind monitor);
/* test_backend_init(tb, 0), test_backend_config() and mrcache_create():
 * the cache, or SKIP (exit 77) naming the monitor that cannot start. */
struct mrcache *test_backend_cache_or_skip(struct test_backend *tb, struct mrcache_config *cfg,
					   enum mrcache_monitor_kind monitor);
/* Make the next `count` registrations fail with `err` (a -errno). */
void test_backend_fail(struct test_backend *tb, int err, unsigned count);
/* Is [addr, addr+len) inside a live registration? */
int test_backend_covers(struct test_backend *tb, const void *addr, size_t len);

extern const struct mrcache_backend_ops test_backend_ops;

#endif
