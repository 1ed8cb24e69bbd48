/* SPDX-License-Identifier: MIT */
/*
 * wl_churn.c - end to end with real pins: a program that mallocs buffers of
 * assorted sizes, reads a file into each with io_uring READ_FIXED through
 * the registration the cache hands out, and frees them again in random
 * order.  Freed blocks are reused at the same addresses (cache hits) or
 * given back to the kernel (munmap, brk shrink: invalidations).
 *
 * Time per iteration is the median of slices of 25 iterations.
 *
 * Every read is checked: its first and last byte are cleared before and
 * must hold the file's pattern after.  A stale registration (pinning pages
 * that are no longer the buffer's) leaves them clear; the count must be 0
 * for any cache with a working monitor (a peer with stale reads is
 * INVALID in the report).
 *
 * Where the buffers come from decides what there is to invalidate, so
 * every peer must run with the same allocator state: glibc's dynamic mmap
 * threshold rises when an mmapped block is freed, and a peer whose open()
 * frees one would churn on the brk heap while the others churn on
 * mmap/munmap.  Two variants: `churn` keeps glibc's defaults and records,
 * after opening the peer, whether a 1 MiB malloc is mmapped (the `1M mmap`
 * column: it must be the same in every row); `churn-fixed` pins
 * M_MMAP_THRESHOLD to glibc's initial 128 KiB in the worker before
 * anything else (child.c), so 256 KiB and 1 MiB buffers are always mmapped
 * and unmapped by free.  The benchmark itself frees no mmapped block before
 * the loop: the file's pattern is written from an mmap of its own.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bench.h"

#define CHURN_SLOTS 16
#define CHURN_MAX (1u << 20)
#define CHURN_PATTERN 0x5a
#define CHURN_SLICE 25		/* iterations per timed slice */

static const size_t churn_sizes[] = { 4096, 16384, 65536, 262144, CHURN_MAX };

static int churn_file(void)
{
	int fd = memfd_create("mrc-bench-churn", 0);
	char *chunk;
	ssize_t n;

	if (fd < 0)
		return -errno;
	chunk = mmap(NULL, CHURN_MAX, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (chunk == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	memset(chunk, CHURN_PATTERN, CHURN_MAX);
	n = write(fd, chunk, CHURN_MAX);
	munmap(chunk, CHURN_MAX);
	if (n != (ssize_t)CHURN_MAX) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* One use of buf: register, read the file into it, check, release. */
static int churn_use(struct bench_peer *p, int fd, char *buf, size_t len,
		     long *stale)
{
	struct io_uring *ring = p->pins->ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t key;
	void *ref;
	int ret;

	buf[0] = 0;
	buf[len - 1] = 0;
	ret = p->ops->get(p, buf, len, &ref, &key);
	if (ret == -EFAULT) {	/* merged with a stale region: unregistrable */
		(*stale)++;
		return 0;
	}
	if (ret < 0)
		return ret;
	sqe = io_uring_get_sqe(ring);
	io_uring_prep_read_fixed(sqe, fd, buf, (unsigned)len, 0, (int)key);
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret >= 0)
		ret = io_uring_wait_cqe(ring, &cqe);
	if (ret == 0) {
		ret = cqe->res < 0 ? cqe->res : 0;
		if (cqe->res >= 0 && (size_t)cqe->res != len)
			ret = -EIO;
		io_uring_cqe_seen(ring, cqe);
	}
	/* EFAULT here or from get(): a cache without a monitor handed out,
	 * or merged with, a registration of pages the buffer no longer has:
	 * the read did not land either. */
	if (ret == -EFAULT) {
		(*stale)++;
		ret = 0;
	} else if (ret == 0 && (buf[0] != CHURN_PATTERN ||
				buf[len - 1] != CHURN_PATTERN)) {
		(*stale)++;
	}
	p->ops->put(p, ref);
	return ret;
}

static int churn_run(struct bench_peer *p, long iters,
		     const struct bench_opts *o, double *v)
{
	char *slot[CHURN_SLOTS] = { 0 };
	uint64_t seed = 7, t0 = 0, regs0 = peer_registrations(p);
	int mmaps_1m = malloc_mmaps_1m();	/* the state as open() left it */
	struct batches b;
	long stale = 0;
	int fd = churn_file(), ret = 0;

	if (fd < 0)
		return fd;
	if (batches_init(&b, (int)(iters / CHURN_SLICE) + 1) < 0) {
		close(fd);
		return -ENOMEM;
	}
	for (long i = 0; i < iters && ret == 0; i++) {
		unsigned s = (unsigned)(rng_next(&seed) % CHURN_SLOTS);
		size_t len = churn_sizes[rng_next(&seed) %
					 (sizeof(churn_sizes) / sizeof(churn_sizes[0]))];

		if (i % CHURN_SLICE == 0) {
			if (i)
				batches_add(&b, now_ns() - t0, CHURN_SLICE);
			t0 = now_ns();
		}
		free(slot[s]);
		slot[s] = malloc(len);
		if (!slot[s]) {
			ret = -ENOMEM;
			break;
		}
		ret = churn_use(p, fd, slot[s], len, &stale);
	}
	if (ret < 0)
		snprintf(p->why, sizeof(p->why), "churn: io_uring read: %s",
			 strerror(-ret));
	for (unsigned s = 0; s < CHURN_SLOTS; s++)
		free(slot[s]);
	close(fd);
	v[0] = batches_median(&b);
	v[1] = (double)(peer_registrations(p) - regs0) * 1000.0 / (double)iters;
	v[2] = (double)stale;
	v[3] = mmaps_1m;
	return ret;
}

/* The two variants differ only in the allocator state they run with. */
#define CHURN_WORKLOAD						\
	.param_name = "iterations",				\
	.params = { 4000 },					\
	.quick_params = { 300 },				\
	.nmetrics = 4,						\
	.metric = { "ns/iter", "regs/1000", "stale reads", "1M mmap" }, \
	.lower_is_better = 1,					\
	.uring = 1,						\
	.run = churn_run

const struct workload wl_churn = {
	.name = "churn",
	.what = "malloc, io_uring READ_FIXED through the cache, free (4K-1M)",
	CHURN_WORKLOAD,
};

const struct workload wl_churn_fixed = {
	.name = "churn-fixed",
	.what = "churn, M_MMAP_THRESHOLD pinned to 128 KiB in every worker",
	.fresh = 1,
	.mmap_threshold = 128 * 1024,
	CHURN_WORKLOAD,
};
