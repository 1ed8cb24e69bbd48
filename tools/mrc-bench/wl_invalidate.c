/* SPDX-License-Identifier: MIT */
/*
 * wl_invalidate.c - invalidation: munmap of cached regions, per region.
 *
 * Two sets of one-page regions with the same layout live side by side:
 * `watched` is in the cache, `bare` never was.  Slices of 50 munmaps
 * alternate between the two sets, so both are timed in the same process at
 * the same moment (the machine is noisy) and the difference is what the
 * cache and its monitor add to an munmap of a cached region; then the
 * cache call that reclaims what the monitor queued is timed too.
 *   added/region = median(watched slice) - median(bare slice) + reclaim
 * In bulk, one munmap covers each whole set.
 *
 * Then the watched addresses are mapped again and every region asked for
 * once: the fraction that registers anew shows the cache really dropped
 * them (with monitor `none` it hands out the stale registrations: 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench.h"

#define INVALIDATE_SLICE 50	/* munmaps per timed slice */

struct set {
	void *base;
	void **addr;
};

static int set_open(struct set *s, long n)
{
	s->base = pages_map(2 * (size_t)n);
	s->addr = s->base ? regions_layout(s->base, (size_t)n) : NULL;
	return s->addr ? 0 : -ENOMEM;
}

static void set_close(struct set *s, long n)
{
	if (s->base)
		munmap(s->base, 2 * (size_t)n * page_size());
	free(s->addr);
}

static int cache_all(struct bench_peer *p, const struct set *s, long n)
{
	void *ref;
	int ret = 0;

	for (long i = 0; i < n && ret == 0; i++) {
		ret = peer_get(p, s->addr[i], page_size(), &ref);
		if (ret == 0)
			p->ops->put(p, ref);
	}
	return ret;
}

static uint64_t unmap_slice(const struct set *s, long from, long k)
{
	uint64_t t0 = now_ns();

	for (long j = from; j < from + k; j++)
		munmap(s->addr[j], page_size());
	return now_ns() - t0;
}

static int unmap_one_by_one(const struct set *w, const struct set *b, long n,
			    double *watched, double *bare)
{
	struct batches bw, bb;

	if (batches_init(&bw, (int)(n / INVALIDATE_SLICE) + 1) < 0)
		return -ENOMEM;
	if (batches_init(&bb, (int)(n / INVALIDATE_SLICE) + 1) < 0) {
		batches_median(&bw);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i += INVALIDATE_SLICE) {
		long k = i + INVALIDATE_SLICE <= n ? INVALIDATE_SLICE : n - i;

		/* Alternate which set goes first: no order bias. */
		if ((i / INVALIDATE_SLICE) % 2) {
			batches_add(&bb, unmap_slice(b, i, k), k);
			batches_add(&bw, unmap_slice(w, i, k), k);
		} else {
			batches_add(&bw, unmap_slice(w, i, k), k);
			batches_add(&bb, unmap_slice(b, i, k), k);
		}
	}
	*watched = batches_median(&bw);
	*bare = batches_median(&bb);
	return 0;
}

static void unmap_bulk(const struct set *w, const struct set *b, long n,
		       double *watched, double *bare)
{
	size_t span = 2 * (size_t)n * page_size();
	uint64_t t0 = now_ns();

	munmap(b->base, span);
	*bare = (double)(now_ns() - t0) / (double)n;
	t0 = now_ns();
	munmap(w->base, span);
	*watched = (double)(now_ns() - t0) / (double)n;
}

/* Map the watched set again and ask for every region: how many register? */
static int reregistered(struct bench_peer *p, const struct set *w, long n,
			double *fraction)
{
	size_t span = 2 * (size_t)n * page_size();
	uint64_t regs;
	int ret;

	if (mmap(w->base, span, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		return -errno;
	for (long i = 0; i < n; i++)
		((volatile char *)w->addr[i])[0] = 1;
	p->ops->progress(p);
	pins_sync(p->pins);
	regs = p->pins->regs;
	ret = cache_all(p, w, n);
	pins_sync(p->pins);
	*fraction = (double)(p->pins->regs - regs) / (double)n;
	return ret;
}

static int invalidate_common(struct bench_peer *p, long n, int bulk,
			     double *v)
{
	struct set w = { 0 }, b = { 0 };
	uint64_t t0;
	int ret;



	ret = set_open(&w, n);
	if (ret == 0)
		ret = set_open(&b, n);
	if (ret == 0)
		ret = cache_all(p, &w, n);
	if (ret < 0)
		goto out;
	if (bulk) {
		unmap_bulk(&w, &b, n, &v[1], &v[2]);
		b.base = NULL;		/* gone whole */
	} else if ((ret = unmap_one_by_one(&w, &b, n, &v[1], &v[2])) < 0)
		goto out;
	t0 = now_ns();
	p->ops->progress(p);
	v[3] = (double)(now_ns() - t0) / (double)n;
	v[0] = v[1] - v[2] + v[3];
	v[5] = v[1] / v[2];	/* per sample: both halves saw the same load */
	ret = reregistered(p, &w, n, &v[4]);
out:
	set_close(&w, n);
	set_close(&b, n);
	return ret;
}

static int invalidate_run(struct bench_peer *p, long n,
			  const struct bench_opts *o, double *v)
{
	return invalidate_common(p, n, 0, v);
}

static int invalidate_bulk_run(struct bench_peer *p, long n,
			       const struct bench_opts *o, double *v)
{
	return invalidate_common(p, n, 1, v);
}

const struct workload wl_invalidate = {
	.name = "invalidate",
	.what = "munmap of each cached region vs of an uncached one, then reclaim",
	.param_name = "regions",
	.params = { 5000 },
	.quick_params = { 100 },
	.nmetrics = 6,
	.metric = { "added ns", "watched ns", "bare ns", "reclaim ns",
		    "re-registered", "watched/bare" },
	.lower_is_better = 1,
	.run = invalidate_run,
};

const struct workload wl_invalidate_bulk = {
	.name = "invalidate-bulk",
	.what = "one munmap over all cached regions vs over uncached ones, then reclaim",
	.param_name = "regions",
	.params = { 1000, 10000 },
	.quick_params = { 100 },
	.nmetrics = 6,
	.metric = { "added ns", "watched ns", "bare ns", "reclaim ns",
		    "re-registered", "watched/bare" },
	.lower_is_better = 1,
	.run = invalidate_bulk_run,
};
