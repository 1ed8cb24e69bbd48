/* SPDX-License-Identifier: MIT */
/* oracle.c - see oracle.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "oracle.h"

int oracle_init(struct oracle *o, unsigned lanes, size_t max_len)
{
	int ret;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	o->ring.ring_fd = -1;
	if (!lanes || !max_len)
		return -EINVAL;
	ret = io_uring_queue_init(8, &o->ring, 0);
	if (ret < 0) {
		fprintf(stderr, "oracle: io_uring_queue_init: %s\n", strerror(-ret));
		return ret;
	}
	o->fd = memfd_create("mrcache-oracle", MFD_CLOEXEC);
	if (o->fd < 0 || ftruncate(o->fd, (off_t)(lanes * max_len)) < 0) {
		ret = -errno;
		fprintf(stderr, "oracle: pattern file: %s\n", strerror(errno));
		goto fail;
	}
	o->pattern = calloc(lanes, sizeof(*o->pattern));
	o->seen = calloc(lanes, sizeof(*o->seen));
	if (!o->pattern || !o->seen) {
		ret = -ENOMEM;
		goto fail;
	}
	o->lanes = lanes;
	for (unsigned i = 0; i < lanes; i++) {
		o->pattern[i] = malloc(max_len);
		o->seen[i] = malloc(max_len);
		if (!o->pattern[i] || !o->seen[i]) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	o->max_len = max_len;
	pthread_mutex_init(&o->ring_lock, NULL);
	return 0;
fail:
	oracle_fini(o);
	return ret;
}

void oracle_fini(struct oracle *o)
{
	for (unsigned i = 0; i < o->lanes; i++) {
		free(o->pattern[i]);
		free(o->seen[i]);
	}
	if (o->max_len)
		pthread_mutex_destroy(&o->ring_lock);
	free(o->pattern);
	free(o->seen);
	o->pattern = o->seen = NULL;
	o->lanes = 0;
	o->max_len = 0;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->ring.ring_fd >= 0)
		io_uring_queue_exit(&o->ring);
	o->ring.ring_fd = -1;
}

void oracle_config(struct oracle *o, struct mrcache_config *cfg,
		   enum mrcache_monitor_kind monitor, unsigned slots)
{
	mrcache_config_init(cfg);
	cfg->backend = MRCACHE_BACKEND_URING;
	cfg->ring = &o->ring;
	cfg->uring_slots = slots;
	cfg->monitor = monitor;
	cfg->flags |= MRCACHE_FLAG_NO_ENV;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Every byte depends on the check number, so neither zeros nor an earlier
 * pattern left in some page can pass for this one. */
static void pattern_fill(unsigned char *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = mix64(seed * 0x100000001b3ull + i);
		size_t n = len - i < 8 ? len - i : 8;

		memcpy(p + i, &w, n);
	}
}

static int read_fixed(struct oracle *o, int buf_index, void *addr,
		      size_t len, off_t off)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret;

	pthread_mutex_lock(&o->ring_lock);
	sqe = io_uring_get_sqe(&o->ring);
	if (!sqe) {
		ret = -EBUSY;
		goto out;
	}
	io_uring_prep_read_fixed(sqe, o->fd, addr, (unsigned)len, (uint64_t)off,
				 buf_index);
	ret = io_uring_submit_and_wait(&o->ring, 1);
	if (ret < 0)
		goto out;
	ret = io_uring_wait_cqe(&o->ring, &cqe);
	if (ret < 0)
		goto out;
	ret = cqe->res;
	io_uring_cqe_seen(&o->ring, cqe);
	if (ret >= 0)
		ret = (size_t)ret == len ? 0 : -EIO;
out:
	pthread_mutex_unlock(&o->ring_lock);
	return ret;
}

/*
 * Compare what [addr, addr+len) maps now with pat.  The bytes are copied by
 * the kernel (process_vm_readv on ourselves), so a test that replaces the
 * pages concurrently (and discards such checks) is not a data race in the
 * eyes of ThreadSanitizer, which sees mmap(MAP_FIXED) as a write.
 */
static int mapping_equals(unsigned char *seen, const void *addr,
			  const unsigned char *pat, size_t len)
{
	struct iovec local = { seen, len };
	struct iovec remote = { (void *)addr, len };

	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len)
		return memcmp(seen, pat, len) == 0;
	return memcmp(addr, pat, len) == 0;
}

int oracle_check_index(struct oracle *o, unsigned lane, int buf_index,
		       void *addr, size_t len)
{
	off_t off = (off_t)(lane * o->max_len);
	unsigned char *pat;
	uint64_t seed;
	int ret;

	if (lane >= o->lanes || !len || len > o->max_len || len > UINT32_MAX)
		return -EINVAL;
	pat = o->pattern[lane];
	seed = __atomic_add_fetch(&o->seq, 1, __ATOMIC_RELAXED);
	pattern_fill(pat, len, seed);
	if (pwrite(o->fd, pat, len, off) != (ssize_t)len)
		return errno ? -errno : -EIO;
	ret = read_fixed(o, buf_index, addr, len, off);
	if (ret)
		return ret;
	return mapping_equals(o->seen[lane], addr, pat, len) ? ORACLE_FRESH
							      : ORACLE_STALE;
}

int oracle_check(struct oracle *o, unsigned lane, struct mrcache_region *r,
		 void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)mrcache_region_addr(r);
	uintptr_t a = (uintptr_t)addr;

	if (a < start || a + len > start + mrcache_region_length(r))
		return -EINVAL;
	return oracle_check_index(o, lane, (int)mrcache_region_key(r), addr, len);
}

int oracle_probe(struct oracle *o, struct mrcache *cache, void *addr,
		 size_t len, int *missed)
{
	struct mrcache_stats before, after;
	struct mrcache_region *r = NULL;
	int ret, got;

	ret = mrcache_stats_get(cache, &before);
	if (ret)
		return ret;
	got = mrcache_get(cache, addr, len, MRCACHE_ACCESS_LOCAL_WRITE, &r);
	ret = mrcache_stats_get(cache, &after);
	if (missed)
		*missed = after.misses != before.misses;
	if (got)
		return got;
	if (!ret)
		ret = oracle_check(o, 0, r, addr, len);
	mrcache_put(cache, r);
	return ret;
}
