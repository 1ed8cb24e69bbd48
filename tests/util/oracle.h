/* SPDX-License-Identifier: MIT */
/*
 * oracle.h - the io_uring stale-data oracle (docs: shared stale-oracle note).
 *
 * A cache built on the oracle's ring registers io_uring fixed buffers.  To
 * check a region, the oracle writes a pattern no earlier check used into a
 * file, reads it with IORING_OP_READ_FIXED through the region's buffer
 * index, and compares the application's current mapping with the pattern.
 * A registration that still pins pages the address no longer maps sends
 * the bytes to those old pages: the mapping does not see them.
 *
 *   oracle_init(&o, lanes, max_len);
 *   oracle_config(&o, &cfg, slots);        cfg.backend = uring on o.ring
 *   mrcache_create(&cfg, &cache);
 *   mrcache_get(cache, addr, len, access, &r);
 *   v = oracle_check(&o, lane, r, addr, len);   ORACLE_FRESH / ORACLE_STALE
 *
 * Threads: oracle_check() may be called from several threads at once if
 * each uses its own lane (lane < lanes); the ring is shared under a mutex.
 */
#ifndef MRC_TEST_ORACLE_H
#define MRC_TEST_ORACLE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <liburing.h>
#include "mrcache.h"

enum oracle_verdict {
	ORACLE_FRESH = 0,	/* the current mapping saw the bytes */
	ORACLE_STALE = 1,	/* the bytes went elsewhere: stale registration */
};

struct oracle {
	struct io_uring ring;
	/* ring_lock guards the ring's submission and completion queues. */
	pthread_mutex_t ring_lock;
	int fd;			/* holds each lane's pattern at lane * max_len */
	unsigned lanes;
	size_t max_len;
	uint64_t seq;		/* atomic: makes every pattern unique */
	unsigned char **pattern; /* per lane: the bytes written */
	unsigned char **seen;	/* per lane: the bytes the mapping holds */
};

/* 0, or -errno (and a message on stderr) when io_uring is unusable here. */
int oracle_init(struct oracle *o, unsigned lanes, size_t max_len);
void oracle_fini(struct oracle *o);

/* Fill *cfg for a uring-backed cache on the oracle's ring, honouring no
 * MRCACHE_* variable (the caller picks the monitor). */
void oracle_config(struct oracle *o, struct mrcache_config *cfg,
		   enum mrcache_monitor_kind monitor, unsigned slots);

/* READ_FIXED a fresh pattern into [addr, addr+len) through region r's
 * buffer index, then compare the current mapping with it.  The range must
 * lie inside r.  Returns ORACLE_FRESH, ORACLE_STALE or -errno. */
int oracle_check(struct oracle *o, unsigned lane, struct mrcache_region *r,
		 void *addr, size_t len);

/* The same through a raw buffer index of the oracle's ring. */
int oracle_check_index(struct oracle *o, unsigned lane, int buf_index,
		       void *addr, size_t len);

/* get + check + put in one: *missed tells whether the get missed (set
 * even when the get fails).  Needs a cache whose stats only this thread
 * changes. */
int oracle_probe(struct oracle *o, struct mrcache *cache, void *addr,
		 size_t len, int *missed);

#endif
