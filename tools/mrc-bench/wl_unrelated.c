/* SPDX-License-Identifier: MIT */
/*
 * wl_unrelated.c - the monitor's tax on everything else: mmap, touch and
 * munmap of memory that holds no registration while the cache holds 1,000
 * regions elsewhere.  Compare each row with the no-cache one.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "bench.h"

#define UNRELATED_CACHED 1000
#define UNRELATED_PAGES 4
#define UNRELATED_SLICE 50

static int unrelated_run(struct bench_peer *p, long iters,
			 const struct bench_opts *o, double *v)
{
	size_t pg = page_size(), n = o->quick ? 100 : UNRELATED_CACHED;
	void *base = pages_map(2 * n), *ref;
	void **addr = base ? regions_layout(base, n) : NULL;
	struct batches b = { 0 };
	int ret = 0;

	if (!addr) {
		if (base)
			munmap(base, 2 * n * pg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && ret == 0; i++) {
		ret = peer_get(p, addr[i], pg, &ref);
		if (ret == 0)
			p->ops->put(p, ref);
	}
	if (ret == 0 && batches_init(&b, (int)(iters / UNRELATED_SLICE) + 1) < 0)
		ret = -ENOMEM;
	for (long i = 0; i < iters && ret == 0; i += UNRELATED_SLICE) {
		uint64_t t0 = now_ns();

		for (int k = 0; k < UNRELATED_SLICE; k++) {
			char *q = mmap(NULL, UNRELATED_PAGES * pg,
				       PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (q == MAP_FAILED) {
				ret = -errno;
				break;
			}
			q[0] = 1;
			munmap(q, UNRELATED_PAGES * pg);
		}
		batches_add(&b, now_ns() - t0, UNRELATED_SLICE);
	}
	if (ret == 0)
		v[0] = batches_median(&b);
	free(b.per_op);
	munmap(base, 2 * n * pg);
	free(addr);
	return ret;
}

const struct workload wl_unrelated = {
	.name = "unrelated",
	.what = "mmap+touch+munmap of 16 KiB holding no registration",
	.param_name = "iterations",
	.params = { 20000 },
	.quick_params = { 500 },
	.nmetrics = 1,
	.metric = { "ns/iter" },
	.lower_is_better = 1,
	.run = unrelated_run,
};
