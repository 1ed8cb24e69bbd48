/* SPDX-License-Identifier: MIT */
/*
 * libreplay.c - engine "libmrcache": replay a trace through the real
 * cache.  One cache per traced process, monitor none (nothing in this
 * process watches the traced one), told of every invalidating VM call by
 * mrcache_invalidate() over the ranges vmranges.c computes, so it sees the
 * invalidations a working monitor would deliver.  The callbacks backend
 * registers nothing: it charges the configuration's cost model and keeps
 * the length in the handle for the deregistration's charge.  Hits, misses,
 * merges, evictions and deregistrations are the cache's own statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mrcache.h"
#include "sim.h"
#include "spaces.h"

struct charge {
	const struct mp_sim_config *c;
	struct mp_sim_result *r;
};

struct lspace {
	uint32_t tgid;		/* first: spaces.h */
	struct mrcache *cache;
	struct mp_vm_state vm;
	uint64_t regions, bytes;	/* last seen, for the peaks */
};

struct lreplay {
	struct charge ch;
	struct mrcache_backend_ops ops;
	struct lspace *sp;
	size_t nsp;
	uint64_t regions, bytes;
};

static int charge_reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
		      uint64_t *key)
{
	struct charge *ch = arg;

	ch->r->reg_ns += mp_sim_reg_ns(ch->c, len);
	ch->r->monitor_ns += ch->c->watch_ns;
	*handle = (void *)(uintptr_t)len;
	*key = (uint64_t)(uintptr_t)addr;
	return 0;
}

static int charge_dereg(void *arg, void *handle)
{
	struct charge *ch = arg;

	ch->r->dereg_ns += mp_sim_dereg_ns(ch->c, (uint64_t)(uintptr_t)handle);
	ch->r->monitor_ns += ch->c->unwatch_ns;
	return 0;
}

static struct lspace *space_get(struct lreplay *lr, uint32_t tgid)
{
	struct mrcache_config cfg;
	struct lspace *v;
	int created;

	v = mp_space_get((void **)&lr->sp, &lr->nsp, sizeof(*v), tgid, &created);
	if (!v || !created)
		return v;
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	cfg.max_regions = lr->ch.c->max_regions;
	cfg.max_bytes = lr->ch.c->max_bytes;
	cfg.ops = &lr->ops;
	cfg.ops_arg = &lr->ch;
	if (mrcache_create(&cfg, &v->cache)) {
		lr->nsp--;
		return NULL;
	}
	return v;
}

static void track_peaks(struct lreplay *lr, struct lspace *sp)
{
	struct mrcache_stats st;

	if (mrcache_stats_get(sp->cache, &st))
		return;
	lr->regions += st.regions - sp->regions;
	lr->bytes += st.bytes - sp->bytes;
	sp->regions = st.regions;
	sp->bytes = st.bytes;
	if (lr->regions > lr->ch.r->peak_regions)
		lr->ch.r->peak_regions = lr->regions;
	if (lr->bytes > lr->ch.r->peak_bytes)
		lr->ch.r->peak_bytes = lr->bytes;
}

/* Flush, add its statistics to the result, destroy. */
static int space_close(struct lreplay *lr, struct lspace *sp)
{
	struct mp_sim_result *r = lr->ch.r;
	struct mrcache_stats st;
	int err;

	mrcache_flush(sp->cache);
	err = mrcache_stats_get(sp->cache, &st);
	if (!err) {
		r->hits += st.hits + st.subrange_hits;
		r->misses += st.misses + st.uncached;
		r->uncached += st.uncached;
		r->registrations += st.registrations;
		r->deregistrations += st.deregistrations;
		r->dereg_invalidated += st.invalidations[MRCACHE_CAUSE_MANUAL];
		r->dereg_evicted += st.evictions;
		r->dereg_merged += st.merges;
		r->dereg_teardown += st.deregistrations - st.invalidations[MRCACHE_CAUSE_MANUAL] -
				     st.evictions - st.merges;
	}
	lr->regions -= sp->regions;
	lr->bytes -= sp->bytes;
	if (!err)
		err = mrcache_destroy(sp->cache);
	mp_space_remove(lr->sp, &lr->nsp, sizeof(*sp), (size_t)(sp - lr->sp));
	return err;
}

static int use_buffer(struct lreplay *lr, struct lspace *sp, uint64_t addr, uint64_t len)
{
	struct mp_sim_result *r = lr->ch.r;
	uint64_t start = addr & ~4095ull, end = (addr + len + 4095) & ~4095ull;
	struct mrcache_region *reg;
	int err;

	if (!len || !addr)
		return 0;
	r->uses++;
	r->lookup_ns += lr->ch.c->lookup_ns;
	r->nocache_ns += mp_sim_reg_ns(lr->ch.c, end - start) + mp_sim_dereg_ns(lr->ch.c, end - start);
	err = mrcache_get(sp->cache, (void *)(uintptr_t)addr, len, MRCACHE_ACCESS_LOCAL_WRITE, &reg);
	if (err)
		return err;
	err = mrcache_put(sp->cache, reg);
	track_peaks(lr, sp);
	return err;
}

static uint32_t on_vm_event(struct lreplay *lr, struct lspace *sp, const struct mp_event *e)
{
	struct mp_sim_result *r = lr->ch.r;
	struct mp_range rg[2];
	enum mp_inv_cause cause;
	int nr = mp_vm_ranges(&sp->vm, e, rg, &cause);
	uint32_t n = 0;

	if (mp_vm_unmapping_call(e))
		r->monitor_ns += lr->ch.c->vmcall_ns;
	for (int i = 0; i < nr; i++) {
		int k = rg[i].len ? mrcache_invalidate(sp->cache, (void *)(uintptr_t)rg[i].start,
						      rg[i].len) : 0;

		if (k > 0) {
			n += (uint32_t)k;
			r->invalidated[cause] += (uint64_t)k;
			r->monitor_ns += lr->ch.c->inval_ns * k;
		}
	}
	if (n)
		mp_sim_count_op(r, n);
	track_peaks(lr, sp);
	return n;
}

int mp_libreplay_run(const struct mp_trace *t, const struct mp_sim_config *c,
		     struct mp_sim_result *r, uint32_t *per_event)
{
	struct lreplay lr = { .ch = { c, r }, .ops = { charge_reg, charge_dereg } };
	int err = 0;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; !err && i < t->nev; i++) {
		const struct mp_event *e = &t->ev[i];
		struct lspace *sp = space_get(&lr, e->tgid);
		uint32_t n = 0;

		if (!sp) {
			err = -ENOMEM;
			break;
		}
		if (e->kind < MP_VM_KINDS)
			n = on_vm_event(&lr, sp, e);
		else if (mp_event_is_buffer(e, 0))
			err = use_buffer(&lr, sp, e->a[1], e->a[2]);
		else if (e->kind == MP_EXEC || e->kind == MP_EXIT)
			err = space_close(&lr, sp);
		if (per_event)
			per_event[i] = n;
	}
	while (lr.nsp) {
		int e2 = space_close(&lr, &lr.sp[lr.nsp - 1]);

		err = err ? err : e2;
	}
	free(lr.sp);
	return err;
}
