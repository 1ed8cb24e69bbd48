/* SPDX-License-Identifier: MIT */
/* peer_nocache.c - no cache: register on every get, deregister on put. */
#include "bench.h"

static int nocache_open(struct bench_peer *p)
{
	return 0;
}

static void nocache_close(struct bench_peer *p)
{
}

static int nocache_get(struct bench_peer *p, void *addr, size_t len,
		       void **ref, uint64_t *key)
{
	return pins_reg(p->pins, addr, len, ref, key);
}

static void nocache_put(struct bench_peer *p, void *ref)
{
	pins_dereg(p->pins, ref);
}

static void nocache_progress(struct bench_peer *p)
{
}

const struct peer_ops peer_nocache_ops = {
	.open = nocache_open,
	.close = nocache_close,
	.get = nocache_get,
	.put = nocache_put,
	.progress = nocache_progress,
};
