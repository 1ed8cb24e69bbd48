/* SPDX-License-Identifier: MIT */
/*
 * wl_misses.c - misses with the no-op backend: get+put of n regions never
 * seen before, so every get registers (median of slices of 100).  The
 * no-cache row is the backend's own cost (reg+dereg); a cache's overhead
 * is its row minus that one.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench.h"

#define MISS_SLICE 100		/* misses per timed slice */

static int misses_run(struct bench_peer *p, long n,
		      const struct bench_opts *o, double *v)
{
	void *base = pages_map(2 * (size_t)n), *ref;
	void **addr = base ? regions_layout(base, (size_t)n) : NULL;
	struct batches b;
	int ret = 0;

	if (!addr || batches_init(&b, (int)(n / MISS_SLICE) + 1) < 0) {
		if (base)
			munmap(base, 2 * (size_t)n * page_size());
		free(addr);
		return -ENOMEM;
	}
	for (long i = 0; i < n && ret == 0; i += MISS_SLICE) {
		long k = i + MISS_SLICE <= n ? MISS_SLICE : n - i;
		uint64_t t0 = now_ns();

		for (long j = i; j < i + k && ret == 0; j++) {
			ret = peer_get(p, addr[j], page_size(), &ref);
			if (ret == 0)
				p->ops->put(p, ref);
		}
		batches_add(&b, now_ns() - t0, k);
	}
	v[0] = batches_median(&b);
	pins_sync(p->pins);
	v[1] = (double)p->pins->regs / (double)n;
	munmap(base, 2 * (size_t)n * page_size());
	free(addr);
	return ret;
}

const struct workload wl_misses = {
	.name = "misses",
	.what = "get+put of a region never seen before (no-op backend)",
	.param_name = "regions",
	.params = { 1000, 10000 },
	.quick_params = { 200 },
	.nmetrics = 2,
	.metric = { "ns/miss", "regs/miss" },
	.lower_is_better = 1,
	.run = misses_run,
};
