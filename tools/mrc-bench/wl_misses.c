/* SPDX-License-Identifier: MIT */
/*
 * wl_misses.c - misses with the no-op backend: get+put of n regions never
 * seen before, so every get registers.  The no-cache row is the backend's
 * own cost (reg+dereg); a cache's overhead is its row minus that one.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench.h"

static int misses_run(struct bench_peer *p, long n,
		      const struct bench_opts *o, double *v)
{
	void *base = pages_map(2 * (size_t)n), *ref;
	void **addr = base ? regions_layout(base, (size_t)n) : NULL;
	uint64_t t0, t1;
	int ret = 0;

	if (!addr) {
		if (base)
			munmap(base, 2 * (size_t)n * page_size());
		return -ENOMEM;
	}
	t0 = now_ns();
	for (long i = 0; i < n && ret == 0; i++) {
		ret = peer_get(p, addr[i], page_size(), &ref);
		if (ret == 0)
			p->ops->put(p, ref);
	}
	t1 = now_ns();
	v[0] = (double)(t1 - t0) / (double)n;
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
