/* SPDX-License-Identifier: MIT */
/*
 * churn.c - destination buffers come and go; every transfer is checked.
 *
 * A few slots each hold an application buffer.  Every iteration picks a
 * slot, often replaces its buffer first, then either
 *   WRITE: RDMA-WRITEs a pattern no earlier iteration used into the buffer
 *          (registered through the cache, addressed by its rkey) and checks
 *          that the application's current mapping sees it, or
 *   READ:  stores such a pattern in the buffer, RDMA-READs it through the
 *          cache's registration into a sink and checks the sink.
 * Buffers are replaced so that addresses come back: malloc/free with the
 * mmap threshold fixed low (large blocks are mmapped and unmapped on free,
 * and the next one lands where the last one was) and the trim threshold low
 * (the brk heap shrinks and grows back), mmap at addresses unmapped
 * earlier (MAP_FIXED_NOREPLACE), and mremap that moves a buffer onto such an
 * address, grows it or shrinks it.  A cache that hands out a registration
 * made before the address was reused moves the bytes to or from the old,
 * still pinned pages: the check sees the old pattern.
 *
 * With monitor `none` that must happen (--expect-stale: the negative
 * control); with any other monitor it must never happen.  The pattern is
 * checked at one 8-byte word per 4 KiB page of the transferred window and
 * at its end: a stale registration misdirects whole pages.  Without a
 * monitor the hazard also shows as EFAULT: a request overlapping a stale
 * region is registered as their union, which covers unmapped pages.
 */
#ifdef MRC_HAVE_VERBS
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mrcache.h"
#include "loop.h"
#include "rdma.h"

#define PAGE		4096ul
#define MAX_SLOTS	64
#define GRAVE		32		/* remembered unmapped ranges */
#define MAX_LEN		(512ul << 10)	/* largest buffer */
#define WINDOW		(32ul << 10)	/* largest transfer */
#define MMAP_THRESHOLD	(128 << 10)
#define TRIM_THRESHOLD	(64 << 10)
#define ACCESS		(MRCACHE_ACCESS_REMOTE_WRITE | MRCACHE_ACCESS_REMOTE_READ)

enum buf_kind { BUF_NONE, BUF_MALLOC, BUF_MMAP };

struct buf {
	char *p;
	size_t len;
	enum buf_kind kind;
};

struct range {
	uintptr_t start, end;
};

struct churn {
	struct rdma_loop loop;
	struct mrcache *cache;
	char *src, *sink;	/* ours, registered directly: always fresh */
	struct ibv_mr *src_mr, *sink_mr;
	struct buf slot[MAX_SLOTS];
	unsigned nslots;
	struct range grave[GRAVE];
	unsigned grave_next;
	uint64_t rng;
	uint64_t iter;
	/* what happened */
	uint64_t writes, reads, stale_writes, stale_reads, failures;
	uint64_t efaults;	/* registrations of unmapped memory */
	uint64_t reused;	/* new buffers over a range unmapped before */
	uint64_t frees, munmaps, mremaps;
};

static uint64_t rnd(struct churn *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

static size_t rnd_range(struct churn *c, size_t lo, size_t hi)
{
	return lo + (size_t)(rnd(c) % (hi - lo + 1));
}

/* A bijection of (iteration, offset): no two checks share a word. */
static uint64_t token(uint64_t iter, size_t off)
{
	uint64_t z = (iter << 24) ^ (off >> 3) ^ 0x6d72636163686521ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The checked words: one per page of the buffer, and its last word. */
static size_t next_off(size_t off, size_t len)
{
	if (off + 8 == len)
		return len;
	off += PAGE;
	return off + 8 <= len ? off : len - 8;
}

static void fill(char *p, size_t len, uint64_t iter)
{
	for (size_t off = 0; off < len; off = next_off(off, len)) {
		uint64_t t = token(iter, off);

		memcpy(p + off, &t, 8);
	}
}

static int matches(const char *p, size_t len, uint64_t iter)
{
	for (size_t off = 0; off < len; off = next_off(off, len)) {
		uint64_t t;

		memcpy(&t, p + off, 8);
		if (t != token(iter, off))
			return 0;
	}
	return 1;
}

static struct range page_range(const void *p, size_t len)
{
	struct range r = {
		.start = (uintptr_t)p & ~(PAGE - 1),
		.end = ((uintptr_t)p + len + PAGE - 1) & ~(PAGE - 1),
	};
	return r;
}

static void bury(struct churn *c, const void *p, size_t len)
{
	c->grave[c->grave_next++ % GRAVE] = page_range(p, len);
}

static void note_reuse(struct churn *c, const void *p, size_t len)
{
	struct range r = page_range(p, len);

	for (unsigned i = 0; i < GRAVE && i < c->grave_next; i++)
		if (c->grave[i].start < r.end && r.start < c->grave[i].end) {
			c->reused++;
			return;
		}
}

static void release(struct churn *c, struct buf *b)
{
	if (b->kind == BUF_MALLOC) {
		if (b->len >= MMAP_THRESHOLD)
			bury(c, b->p, b->len);
		free(b->p);
		c->frees++;
	} else if (b->kind == BUF_MMAP) {
		bury(c, b->p, b->len);
		munmap(b->p, b->len);
		c->munmaps++;
	}
	b->kind = BUF_NONE;
}

/* mmap at a remembered address when it is free again, else anywhere. */
static void *map_reused(struct churn *c, size_t len)
{
	void *p = MAP_FAILED;

	if (c->grave_next && rnd(c) % 4 != 0) {
		const struct range *g = &c->grave[rnd(c) % (c->grave_next < GRAVE ? c->grave_next : GRAVE)];

		p = mmap((void *)g->start, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED && p != (void *)g->start) {
			munmap(p, len);	/* a kernel that ignores NOREPLACE */
			p = MAP_FAILED;
		}
	}
	if (p == MAP_FAILED)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Replace an mmapped buffer by mremap: move it onto a remembered address,
 * grow it (moving if it must) or shrink it.  0, or -1 to fall back. */
static int remap(struct churn *c, struct buf *b)
{
	size_t len = rnd_range(c, 1, MAX_LEN / PAGE) * PAGE;
	void *p, *target;
	int how = (int)(rnd(c) % 3);

	if (how == 2 && len >= b->len)
		how = 1;
	if (how == 0) {
		target = map_reused(c, len);	/* reserve the target range */
		if (!target)
			return -1;
		p = mremap(b->p, b->len, len, MREMAP_MAYMOVE | MREMAP_FIXED, target);
		if (p == MAP_FAILED)
			munmap(target, len);
	} else if (how == 1) {
		len = b->len + rnd_range(c, 1, 16) * PAGE;
		if (len > MAX_LEN)
			return -1;
		p = mremap(b->p, b->len, len, MREMAP_MAYMOVE);
	} else {
		p = mremap(b->p, b->len, len, 0);
	}
	if (p == MAP_FAILED)
		return -1;
	if (p != b->p)
		bury(c, b->p, b->len);
	else if (len < b->len)
		bury(c, b->p + len, b->len - len);
	note_reuse(c, p, len);
	b->p = p;
	b->len = len;
	c->mremaps++;
	return 0;
}

static int replace(struct churn *c, struct buf *b)
{
	size_t len;

	if (b->kind == BUF_MMAP && rnd(c) % 5 < 2 && remap(c, b) == 0)
		return 0;
	release(c, b);
	if (rnd(c) % 2) {
		/* Small blocks from the heap, large ones mmapped by malloc. */
		len = rnd(c) % 2 ? rnd_range(c, 64, 64 << 10)
				 : rnd_range(c, MMAP_THRESHOLD, MAX_LEN - PAGE);
		b->p = malloc(len);
		b->kind = BUF_MALLOC;
	} else {
		len = rnd_range(c, 1, MAX_LEN / PAGE) * PAGE;
		b->p = map_reused(c, len);
		b->kind = BUF_MMAP;
	}
	if (!b->p) {
		b->kind = BUF_NONE;
		fprintf(stderr, "mrc-rdma: out of memory for a %zu-byte buffer\n", len);
		return -ENOMEM;
	}
	b->len = len;
	note_reuse(c, b->p, len);
	return 0;
}

/*
 * One checked transfer: 1 stale, 0 fresh, -errno.  The whole buffer is
 * registered, as an application would; the transfer moves a window of at
 * most WINDOW bytes at a random place in it, because Soft-RoCE in an
 * emulated guest moves about 20 MB/s and a stale registration misdirects
 * every page it covers anyway.
 */
static int transfer(struct churn *c, struct buf *b, int is_read)
{
	size_t len = b->len < WINDOW ? b->len : WINDOW;
	size_t off = rnd_range(c, 0, b->len - len);
	char *win = b->p + off;
	struct mrcache_region *r;
	int ret;

	fill(is_read ? win : c->src, len, c->iter);
	ret = mrcache_get(c->cache, b->p, b->len, ACCESS, &r);
	if (ret) {
		if (ret != -EFAULT)
			fprintf(stderr, "mrc-rdma: mrcache_get(%p, %zu): %s\n",
				b->p, b->len, strerror(-ret));
		return ret;
	}
	if (is_read)
		ret = rdma_loop_xfer(&c->loop, IBV_WR_RDMA_READ, c->sink,
				     c->sink_mr->lkey, (uintptr_t)win,
				     mrcache_region_rkey(r), len);
	else
		ret = rdma_loop_xfer(&c->loop, IBV_WR_RDMA_WRITE, c->src,
				     c->src_mr->lkey, (uintptr_t)win,
				     mrcache_region_rkey(r), len);
	mrcache_put(c->cache, r);
	if (ret)
		return ret;
	return !matches(is_read ? c->sink : win, len, c->iter);
}

static int iterate(struct churn *c)
{
	struct buf *b = &c->slot[rnd(c) % c->nslots];
	int is_read = rnd(c) % 4 == 0, ret;

	if (b->kind == BUF_NONE || rnd(c) % 2) {
		ret = replace(c, b);
		if (ret) {
			c->failures++;
			return ret;
		}
	}
	ret = transfer(c, b, is_read);
	if (ret == -EFAULT) {
		/* A stale region merged with this request: the union
		 * covers pages that are no longer mapped. */
		c->efaults++;
		return 0;
	}
	if (ret < 0) {
		c->failures++;
		return 0;
	}
	if (is_read) {
		c->reads++;
		c->stale_reads += (uint64_t)ret;
	} else {
		c->writes++;
		c->stale_writes += (uint64_t)ret;
	}
	if (ret && c->stale_reads + c->stale_writes <= 3)
		printf("stale %s at iteration %llu: %zu bytes at %p\n",
		       is_read ? "READ" : "WRITE", (unsigned long long)c->iter,
		       b->len, b->p);
	return 0;
}

static int churn_setup(struct churn *c, const struct rdma_opts *o,
		       enum mrcache_monitor_kind monitor, size_t max_regions)
{
	struct mrcache_config cfg;
	int ret;

	ret = rdma_loop_open(&c->loop, o->dev, o->gid_index);
	if (ret)
		return ret;
	c->src = aligned_alloc(PAGE, MAX_LEN);
	c->sink = aligned_alloc(PAGE, MAX_LEN);
	if (!c->src || !c->sink)
		return -ENOMEM;
	memset(c->src, 0, MAX_LEN);
	memset(c->sink, 0, MAX_LEN);
	c->src_mr = ibv_reg_mr(c->loop.pd, c->src, MAX_LEN, IBV_ACCESS_LOCAL_WRITE);
	c->sink_mr = ibv_reg_mr(c->loop.pd, c->sink, MAX_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!c->src_mr || !c->sink_mr) {
		fprintf(stderr, "mrc-rdma: ibv_reg_mr of the transfer buffers: %s\n",
			strerror(errno));
		return -errno;
	}
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.pd = c->loop.pd;
	cfg.monitor = monitor;
	cfg.max_regions = max_regions;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	ret = mrcache_create(&cfg, &c->cache);
	if (ret)
		fprintf(stderr, "mrc-rdma: monitor %s does not start here: %s\n",
			mrcache_monitor_name(monitor), strerror(-ret));
	return ret;
}

static int churn_teardown(struct churn *c)
{
	int ret = 0;

	for (unsigned i = 0; i < c->nslots; i++)
		release(c, &c->slot[i]);
	if (c->cache) {
		ret = mrcache_destroy(c->cache);
		if (ret)
			fprintf(stderr, "mrc-rdma: mrcache_destroy: %s\n", strerror(-ret));
	}
	if (c->src_mr)
		ibv_dereg_mr(c->src_mr);
	if (c->sink_mr)
		ibv_dereg_mr(c->sink_mr);
	free(c->src);
	free(c->sink);
	if (c->loop.ctx)
		rdma_loop_close(&c->loop);
	return ret;
}

static int churn_verdict(const struct churn *c, const char *monitor,
			 int expect_stale, const struct mrcache_stats *st)
{
	uint64_t stale = c->stale_reads + c->stale_writes, inval = 0;

	for (int i = 0; i < MRCACHE_CAUSE_COUNT_; i++)
		inval += st->invalidations[i];
	if (c->failures || c->loop.errors) {
		printf("FAIL: %llu transfers failed (%llu error completions)\n",
		       (unsigned long long)c->failures, (unsigned long long)c->loop.errors);
		return RDMA_FAIL;
	}
	if (!c->reused) {
		printf("FAIL: no address was reused: the workload proved nothing\n");
		return RDMA_FAIL;
	}
	if (expect_stale) {
		stale += c->efaults;
		if (!stale) {
			printf("FAIL: monitor %s: no stale transfer detected; the check cannot see the hazard\n",
			       monitor);
			return RDMA_FAIL;
		}
		printf("PASS: monitor %s: the check caught %llu stale transfers and %llu registrations of unmapped memory (negative control)\n",
		       monitor, (unsigned long long)(stale - c->efaults),
		       (unsigned long long)c->efaults);
		return RDMA_PASS;
	}
	if (stale || c->efaults) {
		printf("FAIL: monitor %s: %llu stale transfers, %llu registrations of unmapped memory\n",
		       monitor, (unsigned long long)stale, (unsigned long long)c->efaults);
		return RDMA_FAIL;
	}
	if (!inval) {
		printf("FAIL: monitor %s invalidated nothing while addresses were reused\n",
		       monitor);
		return RDMA_FAIL;
	}
	printf("PASS: monitor %s: no stale transfer\n", monitor);
	return RDMA_PASS;
}

int churn_main(const struct rdma_opts *o, int argc, char **argv)
{
	static struct churn c;
	enum mrcache_monitor_kind monitor = MRCACHE_MONITOR_COUNT_;
	uint64_t iters = 10000, seed = 1, slots = 8, max_regions = 64, t0, dt;
	struct mrcache_stats st;
	int expect_stale = 0, ret, bad = 0;
	uint64_t inval = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--expect-stale")) {
			expect_stale = 1;
			continue;
		}
		if (!v)
			bad = 1;
		else if (!strcmp(a, "--monitor"))
			bad = mrcache_monitor_parse(v, &monitor) != 0;
		else if (!strcmp(a, "--iters"))
			bad = rdma_parse_num(v, 0, &iters) != 0;
		else if (!strcmp(a, "--seed"))
			bad = rdma_parse_num(v, 0, &seed) != 0 || !seed;
		else if (!strcmp(a, "--slots"))
			bad = rdma_parse_num(v, 0, &slots) != 0 || !slots || slots > MAX_SLOTS;
		else if (!strcmp(a, "--max-regions"))
			bad = rdma_parse_num(v, 0, &max_regions) != 0;
		else
			bad = 1;
		if (bad) {
			fprintf(stderr, "mrc-rdma churn: bad option %s%s%s\n", a,
				v ? " " : "", v ? v : "");
			return 2;
		}
		i++;
	}
	if (monitor == MRCACHE_MONITOR_COUNT_) {
		fprintf(stderr, "mrc-rdma churn: --monitor is required (none, kernel, bpf, uffd, hooks, auto)\n");
		return 2;
	}
	mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
	c.rng = seed * 0x9e3779b97f4a7c15ull;
	c.nslots = (unsigned)slots;
	ret = churn_setup(&c, o, monitor, max_regions);
	if (ret) {
		churn_teardown(&c);
		return ret == -ENOTSUP || ret == -ENODEV || ret == -ENOENT ? RDMA_SKIP : RDMA_FAIL;
	}
	t0 = rdma_now_ns();
	for (c.iter = 1; c.iter <= iters && !ret; c.iter++)
		ret = iterate(&c);
	dt = rdma_now_ns() - t0;
	mrcache_stats_get(c.cache, &st);
	for (int i = 0; i < MRCACHE_CAUSE_COUNT_; i++)
		inval += st.invalidations[i];
	printf("churn %s on %s (GID %d): %llu iterations in %.1f s: %llu writes, %llu reads, %llu stale writes, %llu stale reads\n",
	       mrcache_monitor_name(monitor), c.loop.name, c.loop.gid_index,
	       (unsigned long long)(c.iter - 1), dt / 1e9,
	       (unsigned long long)c.writes, (unsigned long long)c.reads,
	       (unsigned long long)c.stale_writes, (unsigned long long)c.stale_reads);
	if (c.efaults)
		printf("  %llu gets failed with EFAULT: a stale region merged with the request\n",
		       (unsigned long long)c.efaults);
	printf("  buffers: %llu frees, %llu munmaps, %llu mremaps, %llu over reused addresses\n",
	       (unsigned long long)c.frees, (unsigned long long)c.munmaps,
	       (unsigned long long)c.mremaps, (unsigned long long)c.reused);
	printf("  cache: %llu hits, %llu subrange hits, %llu misses, %llu invalidations, %llu evictions, %llu registrations\n",
	       (unsigned long long)st.hits, (unsigned long long)st.subrange_hits,
	       (unsigned long long)st.misses, (unsigned long long)inval,
	       (unsigned long long)st.evictions, (unsigned long long)st.registrations);
	ret = churn_verdict(&c, mrcache_monitor_name(monitor), expect_stale, &st);
	if (churn_teardown(&c))
		ret = RDMA_FAIL;
	return ret;
}
#endif
