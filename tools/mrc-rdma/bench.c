/* SPDX-License-Identifier: MIT */
/*
 * bench.c - the figures of docs/rdma.md, all from one run on one device.
 *
 * 1. Buffer reuse: NBUF buffers written in turn by RDMA WRITE, once with
 *    the cache (get, write, put) and once with ibv_reg_mr and ibv_dereg_mr
 *    around every transfer, in rounds that alternate which goes first.
 *    The churn variant replaces every eighth buffer (munmap, mmap) so the
 *    cache also invalidates and re-registers.  Reported: medians over the
 *    rounds of the speedup and of deregistration's share of the time (for
 *    the cache, from mrcache_stats' register_ns and deregister_ns).
 * 2. Hit cost against registration cost, 4 KiB to 64 MiB: medians of
 *    mrcache_get+put on a cached region, of ibv_reg_mr and of ibv_dereg_mr.
 *
 * Timings in an emulated guest are not absolute figures: only the ratios
 * measured side by side mean something.
 */
#ifdef MRC_HAVE_VERBS
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mrcache.h"
#include "loop.h"
#include "rdma.h"

#define NBUF		8
#define REPLACE_EVERY	8
#define ACCESS		(MRCACHE_ACCESS_REMOTE_WRITE | MRCACHE_ACCESS_REMOTE_READ)
#define IBV_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)
#define MAX_XFER	(1ul << 20)
#define MAX_ROUNDS	15

struct bench {
	struct rdma_loop loop;
	struct mrcache *cache;
	char *src;
	struct ibv_mr *src_mr;
	unsigned transfers;	/* per pass */
	unsigned rounds;	/* pairs of passes per median */
	unsigned reps;		/* samples per median */
};

struct pass {
	uint64_t total_ns;	/* the whole pass */
	uint64_t path_ns;	/* getting and releasing registrations */
	uint64_t reg_ns, dereg_ns;
	uint64_t failures;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *map_touched(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, len);
	return p;
}

/* munmap and map again: the kernel usually returns the same address. */
static int replace(char **p, size_t len)
{
	munmap(*p, len);
	*p = map_touched(len);
	return *p ? 0 : -ENOMEM;
}

static int write_to(struct bench *b, char *dst, uint32_t rkey, size_t len)
{
	return rdma_loop_xfer(&b->loop, IBV_WR_RDMA_WRITE, b->src, b->src_mr->lkey,
			      (uintptr_t)dst, rkey, len);
}

/* One pass through the cache; reg/dereg time from the cache's stats. */
static int pass_cached(struct bench *b, char **buf, size_t len, int churn,
		       struct pass *out)
{
	struct mrcache_stats s0, s1;
	struct mrcache_region *r;
	uint64_t t0, t1;
	int ret = 0;

	mrcache_flush(b->cache);
	mrcache_stats_get(b->cache, &s0);
	t0 = rdma_now_ns();
	for (unsigned t = 0; t < b->transfers && !ret; t++) {
		char **p = &buf[t % NBUF];

		if (churn && t % REPLACE_EVERY == REPLACE_EVERY - 1)
			ret = replace(p, len);
		t1 = rdma_now_ns();
		if (!ret)
			ret = mrcache_get(b->cache, *p, len, ACCESS, &r);
		out->path_ns += rdma_now_ns() - t1;
		if (ret)
			break;
		if (write_to(b, *p, mrcache_region_rkey(r), len))
			out->failures++;
		t1 = rdma_now_ns();
		mrcache_put(b->cache, r);
		out->path_ns += rdma_now_ns() - t1;
	}
	out->total_ns = rdma_now_ns() - t0;
	mrcache_stats_get(b->cache, &s1);
	out->reg_ns = s1.register_ns - s0.register_ns;
	out->dereg_ns = s1.deregister_ns - s0.deregister_ns;
	return ret;
}

/* The same pass with a registration of its own around every transfer. */
static int pass_uncached(struct bench *b, char **buf, size_t len, int churn,
			 struct pass *out)
{
	uint64_t t0, t1;
	struct ibv_mr *mr;
	int ret = 0;

	t0 = rdma_now_ns();
	for (unsigned t = 0; t < b->transfers && !ret; t++) {
		char **p = &buf[t % NBUF];

		if (churn && t % REPLACE_EVERY == REPLACE_EVERY - 1)
			ret = replace(p, len);
		if (ret)
			break;
		t1 = rdma_now_ns();
		mr = ibv_reg_mr(b->loop.pd, *p, len, IBV_ACCESS);
		out->reg_ns += rdma_now_ns() - t1;
		if (!mr) {
			ret = -errno;
			break;
		}
		if (write_to(b, *p, mr->rkey, len))
			out->failures++;
		t1 = rdma_now_ns();
		ibv_dereg_mr(mr);
		out->dereg_ns += rdma_now_ns() - t1;
	}
	out->total_ns = rdma_now_ns() - t0;
	out->path_ns = out->reg_ns + out->dereg_ns;
	return ret;
}

/* Per round, in thousandths: the figures whose medians are reported. */
enum fig {
	FIG_TOTAL,		/* reg-each total / cached total */
	FIG_PATH,		/* reg-each reg path / cached reg path */
	FIG_U_DEREG_PATH,	/* reg-each: dereg / (reg + dereg) */
	FIG_U_DEREG_TOTAL,	/* reg-each: dereg / total */
	FIG_C_DEREG_PATH,	/* cached: dereg / (reg + dereg) */
	FIG_C_DEREG_TOTAL,	/* cached: dereg / total */
	FIG_COUNT
};

static uint64_t milli(uint64_t a, uint64_t b)
{
	return b ? (uint64_t)(1000.0 * (double)a / (double)b + 0.5) : 0;
}

static void figures(const struct pass *u, const struct pass *c, uint64_t *f)
{
	f[FIG_TOTAL] = milli(u->total_ns, c->total_ns);
	f[FIG_PATH] = milli(u->path_ns, c->path_ns ? c->path_ns : 1);
	f[FIG_U_DEREG_PATH] = milli(u->dereg_ns, u->reg_ns + u->dereg_ns);
	f[FIG_U_DEREG_TOTAL] = milli(u->dereg_ns, u->total_ns);
	f[FIG_C_DEREG_PATH] = milli(c->dereg_ns, c->reg_ns + c->dereg_ns);
	f[FIG_C_DEREG_TOTAL] = milli(c->dereg_ns, c->total_ns);
}

/* Rounds alternate which variant goes first, so drift in a noisy
 * machine does not favour one; the ratios are taken within a round. */
static int reuse_rounds(struct bench *b, char **buf, size_t len, int churn,
			uint64_t fig[FIG_COUNT][MAX_ROUNDS])
{
	for (unsigned round = 0; round < b->rounds; round++) {
		struct pass c = { 0 }, u = { 0 };
		uint64_t f[FIG_COUNT];
		int ret;

		if (round % 2) {
			ret = pass_cached(b, buf, len, churn, &c);
			if (!ret)
				ret = pass_uncached(b, buf, len, churn, &u);
		} else {
			ret = pass_uncached(b, buf, len, churn, &u);
			if (!ret)
				ret = pass_cached(b, buf, len, churn, &c);
		}
		if (ret)
			return ret;
		if (c.failures || u.failures) {
			fprintf(stderr, "mrc-rdma: %llu transfers failed\n",
				(unsigned long long)(c.failures + u.failures));
			return -EIO;
		}
		figures(&u, &c, f);
		for (int i = 0; i < FIG_COUNT; i++)
			fig[i][round] = f[i];
	}
	return 0;
}

static int bench_reuse(struct bench *b)
{
	static const size_t sizes[] = { 4 << 10, 64 << 10, 256 << 10 };
	uint64_t fig[FIG_COUNT][MAX_ROUNDS], m[FIG_COUNT];
	int ret = 0;

	printf("\n1. buffer reuse: passes of %u RDMA WRITEs over %d buffers, the cache (get, write, put)\n"
	       "   against ibv_reg_mr+ibv_dereg_mr around every write; `churn` replaces every %dth\n"
	       "   buffer (munmap, mmap) first.  Medians over %u rounds of both side by side.\n"
	       "   speedup: reg-each time / cache time, for the whole pass and for the registration\n"
	       "   path alone (get+put against reg+dereg); dereg: deregistration's share of\n"
	       "   registration plus deregistration, and of the whole pass\n",
	       b->transfers, NBUF, REPLACE_EVERY, b->rounds);
	printf("%-14s %9s %9s   %-21s %-21s\n", "", "speedup", "speedup",
	       "dereg/(reg+dereg)", "dereg/total");
	printf("%-14s %9s %9s   %10s %10s %10s %10s\n", "", "total", "reg path",
	       "reg-each", "cache", "reg-each", "cache");
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && !ret; s++) {
		size_t len = sizes[s];
		char *buf[NBUF] = { 0 };

		for (int i = 0; i < NBUF; i++)
			if (!(buf[i] = map_touched(len)))
				ret = -ENOMEM;
		for (int churn = 0; churn < 2 && !ret; churn++) {
			ret = reuse_rounds(b, buf, len, churn, fig);
			if (ret)
				break;
			for (int i = 0; i < FIG_COUNT; i++)
				m[i] = median(fig[i], b->rounds);
			printf("%4zu KiB %-5s %8.2fx %8.1fx   %9.1f%% %9.1f%% %9.1f%% %9.1f%%\n",
			       len >> 10, churn ? "churn" : "reuse", m[FIG_TOTAL] / 1e3,
			       m[FIG_PATH] / 1e3, m[FIG_U_DEREG_PATH] / 10.0,
			       m[FIG_C_DEREG_PATH] / 10.0, m[FIG_U_DEREG_TOTAL] / 10.0,
			       m[FIG_C_DEREG_TOTAL] / 10.0);
		}
		mrcache_flush(b->cache);
		for (int i = 0; i < NBUF; i++)
			if (buf[i])
				munmap(buf[i], len);
	}
	return ret;
}

/* Median per-operation cost of `batch` get+put hits, over reps batches. */
static uint64_t hit_ns(struct bench *b, char *p, size_t len, uint64_t *v)
{
	const unsigned batch = 100;
	struct mrcache_region *r;

	for (unsigned i = 0; i < b->reps; i++) {
		uint64_t t0 = rdma_now_ns();

		for (unsigned k = 0; k < batch; k++) {
			if (mrcache_get(b->cache, p, len, ACCESS, &r))
				return 0;
			mrcache_put(b->cache, r);
		}
		v[i] = (rdma_now_ns() - t0) / batch;
	}
	return median(v, b->reps);
}

static const char *size_name(size_t len, char *buf, size_t size)
{
	if (len >= (1ul << 20))
		snprintf(buf, size, "%zu MiB", len >> 20);
	else
		snprintf(buf, size, "%zu KiB", len >> 10);
	return buf;
}

static int bench_sizes(struct bench *b)
{
	uint64_t *v = calloc(b->reps, sizeof(*v)), *w = calloc(b->reps, sizeof(*w));
	int ret = 0;

	if (!v || !w) {
		free(v);
		free(w);
		return -ENOMEM;
	}
	printf("\n2. hit against registration, medians of %u\n", b->reps);
	printf("%-9s %10s %12s %12s %10s %12s\n", "size", "hit ns", "reg_mr ns",
	       "dereg_mr ns", "reg/hit", "reg+dereg/hit");
	for (size_t len = 4 << 10; len <= (64ul << 20) && !ret; len <<= 2) {
		struct mrcache_region *r;
		uint64_t hit, reg, dereg;
		char *p = map_touched(len), name[16];

		if (!p) {
			ret = -ENOMEM;
			break;
		}
		for (unsigned i = 0; i < b->reps && !ret; i++) {
			uint64_t t0 = rdma_now_ns(), t1;
			struct ibv_mr *mr = ibv_reg_mr(b->loop.pd, p, len, IBV_ACCESS);

			t1 = rdma_now_ns();
			if (!mr) {
				ret = -errno;
				break;
			}
			ibv_dereg_mr(mr);
			v[i] = t1 - t0;
			w[i] = rdma_now_ns() - t1;
		}
		if (ret)
			break;
		reg = median(v, b->reps);
		dereg = median(w, b->reps);
		ret = mrcache_get(b->cache, p, len, ACCESS, &r);	/* the miss */
		if (ret)
			break;
		mrcache_put(b->cache, r);
		hit = hit_ns(b, p, len, v);
		mrcache_invalidate(b->cache, p, len);
		munmap(p, len);
		if (!hit) {
			ret = -EIO;
			break;
		}
		printf("%-9s %10llu %12llu %12llu %9.0fx %11.0fx\n",
		       size_name(len, name, sizeof(name)), (unsigned long long)hit,
		       (unsigned long long)reg, (unsigned long long)dereg,
		       (double)reg / (double)hit, (double)(reg + dereg) / (double)hit);
	}
	free(v);
	free(w);
	return ret;
}

int bench_main(const struct rdma_opts *o, int argc, char **argv)
{
	static struct bench b;
	enum mrcache_monitor_kind monitor = MRCACHE_MONITOR_AUTO;
	struct mrcache_config cfg;
	int ret;

	b.transfers = 160;
	b.rounds = 5;
	b.reps = 9;
	for (int i = 0; i < argc; i++) {
		uint64_t v;

		if (!strcmp(argv[i], "--quick")) {
			b.transfers = 32;
			b.rounds = 1;
			b.reps = 3;
		} else if (!strcmp(argv[i], "--transfers") && i + 1 < argc &&
			   !rdma_parse_num(argv[i + 1], 0, &v) && v >= NBUF && v <= 1000000) {
			b.transfers = (unsigned)v;
			i++;
		} else if (!strcmp(argv[i], "--rounds") && i + 1 < argc &&
			   !rdma_parse_num(argv[i + 1], 0, &v) && v && v <= MAX_ROUNDS) {
			b.rounds = (unsigned)v;
			i++;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc &&
			   !rdma_parse_num(argv[i + 1], 0, &v) && v && v <= 1000) {
			b.reps = (unsigned)v;
			i++;
		} else if (!strcmp(argv[i], "--monitor") && i + 1 < argc &&
			   !mrcache_monitor_parse(argv[i + 1], &monitor)) {
			i++;
		} else {
			fprintf(stderr, "mrc-rdma bench: bad option %s\n", argv[i]);
			return 2;
		}
	}
	ret = rdma_loop_open(&b.loop, o->dev, o->gid_index);
	if (ret)
		return ret == -ENODEV ? RDMA_SKIP : RDMA_FAIL;
	b.src = map_touched(MAX_XFER);
	b.src_mr = b.src ? ibv_reg_mr(b.loop.pd, b.src, MAX_XFER, IBV_ACCESS_LOCAL_WRITE) : NULL;
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.pd = b.loop.pd;
	cfg.monitor = monitor;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	ret = b.src_mr ? mrcache_create(&cfg, &b.cache) : -ENOMEM;
	if (ret) {
		fprintf(stderr, "mrc-rdma bench: cannot set up: %s\n", strerror(-ret));
	} else {
		struct mrcache_stats st;

		mrcache_stats_get(b.cache, &st);
		printf("mrc-rdma bench on %s, monitor %s (emulated guest: compare ratios only)\n",
		       b.loop.name, mrcache_monitor_name(st.monitor));
		ret = bench_reuse(&b);
		if (!ret)
			ret = bench_sizes(&b);
		if (ret)
			fprintf(stderr, "mrc-rdma bench: %s\n", strerror(-ret));
		mrcache_destroy(b.cache);
	}
	if (b.src_mr)
		ibv_dereg_mr(b.src_mr);
	if (b.src)
		munmap(b.src, MAX_XFER);
	rdma_loop_close(&b.loop);
	return ret ? RDMA_FAIL : RDMA_PASS;
}
#endif
