/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend on a range of the caller's table
 * (MRCACHE_FLAG_URING_SLOTS), with a real ring: the caller registers a
 * sparse table of 32 slots and its own buffers in slots 0 and 31; the
 * cache gets [8, 24).
 *  - every key the cache hands out lies in [8, 24), and READ_FIXED through
 *    it reads the file into the cache's buffer;
 *  - with all 16 of its slots held, one more get is -ENOSPC: the cache
 *    never takes a slot outside its range;
 *  - the caller's slots 0 and 31 keep their buffers, before and after
 *    mrcache_destroy(), which leaves the table registered;
 *  - controls: no table is -ENXIO, a range past the table -EINVAL,
 *    uring_first_slot without the flag -EINVAL, and a cache that owns the
 *    table (no flag) on this ring -EBUSY.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "mrcache.h"
#include "testutil.h"

#define TABLE	32
#define FIRST	8
#define N	16
#define LEN	8192

static int fd;
static char want[LEN];

/* READ_FIXED of the file's first LEN bytes into buf through slot. */
static int read_fixed(struct io_uring *ring, void *buf, int slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int rc;

	memset(buf, 0, LEN);
	io_uring_prep_read_fixed(sqe, fd, buf, LEN, 0, slot);
	rc = io_uring_submit_and_wait(ring, 1);
	if (rc < 0)
		return rc;
	rc = io_uring_peek_cqe(ring, &cqe);
	if (rc)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return rc == LEN && !memcmp(buf, want, LEN) ? 0 : (rc < 0 ? rc : -EIO);
}

static int create(struct io_uring *ring, unsigned flags, unsigned first, unsigned n,
		  struct mrcache **c)
{
	struct mrcache_config cfg;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = ring;
	cfg.monitor = MRCACHE_MONITOR_NONE;
	cfg.flags = MRCACHE_FLAG_NO_ENV | flags;
	cfg.uring_first_slot = first;
	cfg.uring_slots = n;
	return mrcache_create(&cfg, c);
}

int main(void)
{
	struct io_uring ring, bare;
	struct mrcache_region *r[N + 1];
	struct mrcache *c;
	struct iovec iov[2];
	char *app, *bufs;
	int ret;

	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0 || pread(fd, want, LEN, 0) != LEN)
		SKIP("cannot read /proc/self/exe");
	if (io_uring_queue_init(8, &ring, 0) || io_uring_queue_init(8, &bare, 0))
		SKIP("no io_uring here");
	ret = io_uring_register_buffers_sparse(&ring, TABLE);
	if (ret)
		SKIP("io_uring_register_buffers_sparse: %s", strerror(-ret));
	app = aligned_alloc(4096, 2 * LEN);
	bufs = mmap(NULL, 2 * (N + 1) * LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(app && bufs != MAP_FAILED);
	iov[0] = (struct iovec){ app, LEN };
	iov[1] = (struct iovec){ app + LEN, LEN };
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, 0, &iov[0], NULL, 1), 1);
	CHECK_EQ(io_uring_register_buffers_update_tag(&ring, TABLE - 1, &iov[1], NULL, 1), 1);

	/* Controls first: the ring's table is the caller's. */
	CHECK_EQ(create(&bare, MRCACHE_FLAG_URING_SLOTS, FIRST, N, &c), -ENXIO);
	CHECK_EQ(create(&ring, MRCACHE_FLAG_URING_SLOTS, 24, N, &c), -EINVAL);
	CHECK_EQ(create(&ring, 0, FIRST, N, &c), -EINVAL);
	CHECK_EQ(create(&ring, 0, 0, N, &c), -EBUSY);

	CHECK_EQ(create(&ring, MRCACHE_FLAG_URING_SLOTS, FIRST, N, &c), 0);
	if (test_failures)
		return test_result();
	/* Buffers two lengths apart: never merged. */
	for (int i = 0; i < N; i++) {
		char *b = bufs + 2 * i * LEN;

		CHECK_EQ(mrcache_get(c, b, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r[i]), 0);
		CHECK(mrcache_region_key(r[i]) >= FIRST && mrcache_region_key(r[i]) < FIRST + N);
		CHECK_EQ(read_fixed(&ring, b, (int)mrcache_region_key(r[i])), 0);
	}
	CHECK_EQ(mrcache_get(c, bufs + 2 * N * LEN, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r[N]),
		 -ENOSPC);
	CHECK_EQ(read_fixed(&ring, app, 0), 0);
	CHECK_EQ(read_fixed(&ring, app + LEN, TABLE - 1), 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(mrcache_put(c, r[i]), 0);
	CHECK_EQ(mrcache_destroy(c), 0);

	/* The caller's buffers and table outlive the cache; its range is empty. */
	CHECK_EQ(read_fixed(&ring, app, 0), 0);
	CHECK_EQ(read_fixed(&ring, app + LEN, TABLE - 1), 0);
	CHECK(read_fixed(&ring, bufs, FIRST) != 0);
	/* A second cache can take the same range again. */
	CHECK_EQ(create(&ring, MRCACHE_FLAG_URING_SLOTS, FIRST, N, &c), 0);
	if (!test_failures)
		CHECK_EQ(mrcache_destroy(c), 0);
	io_uring_queue_exit(&ring);
	io_uring_queue_exit(&bare);
	free(app);
	return test_result();
}
