/* SPDX-License-Identifier: MIT */
/*
 * wl_invalidate.c - invalidation: munmap of cached regions, one call per
 * region or one call for all of them, then the cache call that reclaims
 * what the monitor queued.  The cost per region includes both; the munmap
 * part alone is what the unmapping thread pays (one by one: the median of
 * slices of 50 calls).
 *
 * Then the same addresses are mapped again and every region asked for once:
 * the fraction that registers anew shows the cache really dropped them (a
 * cache with monitor `none` hands out the stale registrations: 0).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench.h"

#define INVALIDATE_SLICE 50	/* munmaps per timed slice */

static int invalidate_common(struct bench_peer *p, long n, int bulk,
			     double *v)
{
	size_t pg = page_size(), span = 2 * (size_t)n * pg;
	void *base = pages_map(2 * (size_t)n), *ref;
	void **addr = base ? regions_layout(base, (size_t)n) : NULL;
	struct batches b;
	uint64_t t0, regs;
	int ret = 0;

	if (!addr) {
		if (base)
			munmap(base, span);
		return -ENOMEM;
	}
	for (long i = 0; i < n && ret == 0; i++) {
		ret = peer_get(p, addr[i], pg, &ref);
		if (ret == 0)
			p->ops->put(p, ref);
	}
	if (ret < 0)
		goto out;
	if (bulk) {
		t0 = now_ns();
		munmap(base, span);
		v[1] = (double)(now_ns() - t0) / (double)n;
	} else {
		if (batches_init(&b, (int)(n / INVALIDATE_SLICE) + 1) < 0) {
			ret = -ENOMEM;
			goto out;
		}
		for (long i = 0; i < n; i += INVALIDATE_SLICE) {
			long k = i + INVALIDATE_SLICE <= n ? INVALIDATE_SLICE : n - i;

			t0 = now_ns();
			for (long j = i; j < i + k; j++)
				munmap(addr[j], pg);
			batches_add(&b, now_ns() - t0, k);
		}
		v[1] = batches_median(&b);
	}
	t0 = now_ns();
	p->ops->progress(p);
	v[2] = (double)(now_ns() - t0) / (double)n;
	v[0] = v[1] + v[2];

	if (mmap(base, span, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	p->ops->progress(p);
	regs = p->pins->regs;
	for (long i = 0; i < n && ret == 0; i++) {
		((volatile char *)addr[i])[0] = 1;
		ret = peer_get(p, addr[i], pg, &ref);
		if (ret == 0)
			p->ops->put(p, ref);
	}
	v[3] = (double)(p->pins->regs - regs) / (double)n;
out:
	munmap(base, span);
	free(addr);
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
	.what = "munmap of each cached region, then reclaim; per region",
	.param_name = "regions",
	.params = { 1000 },
	.quick_params = { 100 },
	.nmetrics = 4,
	.metric = { "ns/region", "munmap ns", "reclaim ns", "re-registered" },
	.lower_is_better = 1,
	.run = invalidate_run,
};

const struct workload wl_invalidate_bulk = {
	.name = "invalidate-bulk",
	.what = "one munmap over many cached regions, then reclaim; per region",
	.param_name = "regions",
	.params = { 1000, 10000 },
	.quick_params = { 100 },
	.nmetrics = 4,
	.metric = { "ns/region", "munmap ns", "reclaim ns", "re-registered" },
	.lower_is_better = 1,
	.run = invalidate_bulk_run,
};
