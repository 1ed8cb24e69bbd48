/* SPDX-License-Identifier: MIT */
/*
 * wl_merge.c - what backs merging overlapping requests into one region
 * (mrcache's default) against handing a non-contained overlapping request
 * out uncached (MRCACHE_FLAG_NO_MERGE): a buffer sent in growing prefixes,
 * and a window sliding one page at a time over a buffer, each pattern
 * repeated a few times as a program's loop would.
 *
 * Reported: time per request, backend registrations per request, bytes
 * registered per request (the pinning work) and the peak of bytes pinned
 * at once.
 */
#include <errno.h>
#include <sys/mman.h>
#include "bench.h"

#define MERGE_REPEATS 4
#define WINDOW_BUFFER_PAGES 512

static void merge_metrics(struct bench_peer *p, long requests, uint64_t ns,
			  double *v)
{
	v[0] = (double)ns / (double)requests;
	pins_sync(p->pins);
	v[1] = (double)p->pins->regs / (double)requests;
	v[2] = (double)p->pins->bytes_total / (double)requests / 1024.0;
	v[3] = (double)p->pins->bytes_peak / 1024.0;
}

static int request(struct bench_peer *p, void *addr, size_t len)
{
	void *ref;
	int ret = peer_get(p, addr, len, &ref);

	if (ret == 0)
		p->ops->put(p, ref);
	return ret;
}

static int prefix_run(struct bench_peer *p, long pages,
		      const struct bench_opts *o, double *v)
{
	size_t pg = page_size();
	char *buf = pages_map((size_t)pages);
	long requests = 0;
	uint64_t t0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	t0 = now_ns();
	for (int r = 0; r < MERGE_REPEATS && ret == 0; r++)
		for (long k = 1; k <= pages && ret == 0; k++, requests++)
			ret = request(p, buf, (size_t)k * pg);
	merge_metrics(p, requests, now_ns() - t0, v);
	munmap(buf, (size_t)pages * pg);
	return ret;
}

static int window_run(struct bench_peer *p, long window,
		      const struct bench_opts *o, double *v)
{
	size_t pg = page_size(), pages = o->quick ? 64 : WINDOW_BUFFER_PAGES;
	char *buf = pages_map(pages);
	long requests = 0;
	uint64_t t0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	t0 = now_ns();
	for (int r = 0; r < MERGE_REPEATS && ret == 0; r++)
		for (size_t off = 0; off + (size_t)window <= pages && ret == 0;
		     off++, requests++)
			ret = request(p, buf + off * pg, (size_t)window * pg);
	merge_metrics(p, requests, now_ns() - t0, v);
	munmap(buf, pages * pg);
	return ret;
}

const struct workload wl_merge_prefix = {
	.name = "merge-prefix",
	.what = "growing prefixes [0, k pages) of a buffer, k = 1..n, 4 times",
	.param_name = "pages",
	.params = { 64, 256 },
	.quick_params = { 16 },
	.nmetrics = 4,
	.metric = { "ns/req", "regs/req", "KiB reg/req", "peak KiB" },
	.lower_is_better = 1,
	.merge_peers = 1,
	.run = prefix_run,
};

const struct workload wl_merge_window = {
	.name = "merge-window",
	.what = "a window sliding by one page over 512 pages, 4 times",
	.param_name = "window",
	.params = { 4, 32 },
	.quick_params = { 4 },
	.nmetrics = 4,
	.metric = { "ns/req", "regs/req", "KiB reg/req", "peak KiB" },
	.lower_is_better = 1,
	.merge_peers = 1,
	.run = window_run,
};
