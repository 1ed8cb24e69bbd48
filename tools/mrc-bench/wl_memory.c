/* SPDX-License-Identifier: MIT */
/*
 * wl_memory.c - user memory per cached region: malloc'd bytes and resident
 * bytes the cache gained while n regions were added (the cache itself is
 * created before the baseline, the test buffers are never touched, and the
 * no-op backend keeps nothing).  Kernel memory a monitor costs (VMAs a
 * userfaultfd registration splits, a module's slots) is not counted here.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench.h"

static int memory_run(struct bench_peer *p, long n,
		      const struct bench_opts *o, double *v)
{
	size_t pg = page_size(), m0, r0, m1, r1;
	void *base = pages_reserve(2 * (size_t)n), *ref;
	void **addr = base ? regions_layout(base, (size_t)n) : NULL;
	double dm, dr;
	long cached;
	int ret = 0;

	if (!addr) {
		if (base)
			munmap(base, 2 * (size_t)n * pg);
		return -ENOMEM;
	}
	m0 = mem_malloced();
	r0 = mem_resident();
	for (long i = 0; i < n && ret == 0; i++) {
		ret = peer_get(p, addr[i], pg, &ref);
		if (ret == 0)
			p->ops->put(p, ref);
	}
	m1 = mem_malloced();
	r1 = mem_resident();
	dm = ((double)m1 - (double)m0) / (double)n;
	dr = ((double)r1 - (double)r0) / (double)n;
	v[0] = dm > dr ? dm : dr;
	v[1] = dm;
	v[2] = dr;
	/* A region the cache could not keep (a monitor out of resources)
	 * costs nothing: this column says how many it kept. */
	cached = p->ops->cached ? p->ops->cached(p) : -1;
	v[3] = cached < 0 ? NAN : (double)cached / (double)n;
	munmap(base, 2 * (size_t)n * pg);
	free(addr);
	return ret;
}

const struct workload wl_memory = {
	.name = "memory",
	.what = "user memory per cached region: max(malloc, RSS) delta",
	.param_name = "regions",
	.params = { 10000, 100000 },
	.quick_params = { 1000 },
	.nmetrics = 4,
	.metric = { "B/region", "malloc B", "RSS B", "kept" },
	.lower_is_better = 1,
	.fresh = 1,		/* a cache that never held a region */
	.run = memory_run,
};
