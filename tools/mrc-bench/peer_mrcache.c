/* SPDX-License-Identifier: MIT */
/*
 * peer_mrcache.c - this project's cache, one peer per monitor, through the
 * public API only.  With no-op pins it uses the callback backend and the
 * shared callbacks; with real pins its own io_uring backend on the ring
 * the workload made (so the table of fixed buffers is the cache's).
 */
#include <errno.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include "bench.h"

static int cb_reg(void *arg, void *addr, size_t len, unsigned access,
		  void **handle, uint64_t *key)
{
	return pins_reg(arg, addr, len, handle, key);
}

static int cb_dereg(void *arg, void *handle)
{
	return pins_dereg(arg, handle);
}

static const struct mrcache_backend_ops cb_ops = {
	.reg = cb_reg,
	.dereg = cb_dereg,
};

static int mrcache_peer_open(struct bench_peer *p)
{
	struct mrcache_config cfg;
	struct mrcache *cache;
	int ret;

	mrcache_config_init(&cfg);
	cfg.monitor = p->monitor;
	cfg.flags = p->flags | MRCACHE_FLAG_NO_ENV;
	if (p->pin == PIN_URING) {
		cfg.backend = MRCACHE_BACKEND_URING;
		cfg.ring = p->pins->ring;
		cfg.uring_slots = p->pins->slots;
	} else {
		cfg.backend = MRCACHE_BACKEND_CALLBACKS;
		cfg.ops = &cb_ops;
		cfg.ops_arg = p->pins;
	}
	ret = mrcache_create(&cfg, &cache);
	if (ret < 0)
		return ret;
	p->priv = cache;
	return 0;
}

static void mrcache_peer_close(struct bench_peer *p)
{
	mrcache_destroy(p->priv);
}

static int mrcache_peer_get(struct bench_peer *p, void *addr, size_t len,
			    void **ref, uint64_t *key)
{
	struct mrcache_region *r;
	int ret = mrcache_get(p->priv, addr, len, MRCACHE_ACCESS_LOCAL_WRITE,
			      &r);

	if (ret < 0)
		return ret;
	*ref = r;
	*key = mrcache_region_key(r);
	return 0;
}

static void mrcache_peer_put(struct bench_peer *p, void *ref)
{
	mrcache_put(p->priv, ref);
}

static void mrcache_peer_progress(struct bench_peer *p)
{
	mrcache_progress(p->priv);
}

static uint64_t mrcache_peer_registrations(struct bench_peer *p)
{
	struct mrcache_stats st;

	if (p->pin == PIN_NOOP || mrcache_stats_get(p->priv, &st) < 0) {
		pins_sync(p->pins);
		return p->pins->regs;
	}
	return st.registrations;
}

static long mrcache_peer_cached(struct bench_peer *p)
{
	struct mrcache_stats st;

	return mrcache_stats_get(p->priv, &st) < 0 ? -1 : (long)st.regions;
}

static void mrcache_peer_reset(struct bench_peer *p)
{
	mrcache_progress(p->priv);
	mrcache_flush(p->priv);
}

const struct peer_ops peer_mrcache_ops = {
	.open = mrcache_peer_open,
	.close = mrcache_peer_close,
	.get = mrcache_peer_get,
	.put = mrcache_peer_put,
	.progress = mrcache_peer_progress,
	.registrations = mrcache_peer_registrations,
	.cached = mrcache_peer_cached,
	.reset = mrcache_peer_reset,
};
