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
 * that are no longer the buffer's) leaves them clear; the count is the last
 * column and must be 0 for any cache with a working monitor.
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

	if (fd < 0)
		return -errno;
	chunk = malloc(CHURN_MAX);
	if (!chunk) {
		close(fd);
		return -ENOMEM;
	}
	memset(chunk, CHURN_PATTERN, CHURN_MAX);
	if (write(fd, chunk, CHURN_MAX) != (ssize_t)CHURN_MAX) {
		free(chunk);
		close(fd);
		return -EIO;
	}
	free(chunk);
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
	if (ret == 0 && (buf[0] != CHURN_PATTERN || buf[len - 1] != CHURN_PATTERN))
		(*stale)++;
	p->ops->put(p, ref);
	return ret;
}

static int churn_run(struct bench_peer *p, long iters,
		     const struct bench_opts *o, double *v)
{
	char *slot[CHURN_SLOTS] = { 0 };
	uint64_t seed = 7, t0 = 0, regs0 = peer_registrations(p);
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
	return ret;
}

const struct workload wl_churn = {
	.name = "churn",
	.what = "malloc, io_uring READ_FIXED through the cache, free (4K-1M)",
	.param_name = "iterations",
	.params = { 4000 },
	.quick_params = { 300 },
	.nmetrics = 3,
	.metric = { "ns/iter", "regs/1000", "stale reads" },
	.lower_is_better = 1,
	.uring = 1,
	.run = churn_run,
};
