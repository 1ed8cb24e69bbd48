/* SPDX-License-Identifier: MIT */
/*
 * uring-slots: an io_uring engine that keeps its own fixed-buffer pool and
 * gives the cache a range of the same table.  The engine registers a
 * sparse table of 64 slots, puts its pool in slots 0..15, and creates the
 * cache with MRCACHE_FLAG_URING_SLOTS, uring_first_slot 16 and uring_slots
 * 48: the cache fills only slots 16..63 with the buffers it is given, and
 * the engine's slots stay as they are.  Both kinds are read into with
 * IORING_OP_READ_FIXED.
 *   uring-slots [FILE]     (default: this program)
 * Exit 0, 1 on failure, 77 when io_uring is not available here.
 */
#include <fcntl.h>
#include <liburing.h>
#include <mrcache.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define TABLE		64
#define POOL		16	/* the engine's own slots: 0 .. POOL-1 */
#define BUF_LEN		65536

static int read_fixed(struct io_uring *ring, int fd, void *buf, int slot)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int rc;

	io_uring_prep_read_fixed(sqe, fd, buf, BUF_LEN, 0, slot);
	rc = io_uring_submit_and_wait(ring, 1);
	if (rc < 0)
		return rc;
	rc = io_uring_peek_cqe(ring, &cqe);
	if (rc)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return rc;
}

int main(int argc, char **argv)
{
	struct io_uring ring;
	struct mrcache_config cfg;
	struct mrcache *cache;
	struct mrcache_region *r;
	struct iovec pool;
	char *app, *buf;
	int fd, rc, n1, n2, slot;

	fd = open(argc > 1 ? argv[1] : argv[0], O_RDONLY);
	if (fd < 0 || io_uring_queue_init(8, &ring, 0)) {
		printf("uring-slots: no io_uring here\n");
		return 77;
	}
	/* The engine's table and its own buffer in slot 0. */
	rc = io_uring_register_buffers_sparse(&ring, TABLE);
	app = aligned_alloc(4096, BUF_LEN);
	buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pool.iov_base = app;
	pool.iov_len = BUF_LEN;
	if (rc || !app || buf == MAP_FAILED ||
	    io_uring_register_buffers_update_tag(&ring, 0, &pool, NULL, 1) != 1) {
		printf("uring-slots: cannot register buffers here (%d)\n", rc);
		return 77;
	}

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &ring;
	cfg.flags = MRCACHE_FLAG_URING_SLOTS;
	cfg.uring_first_slot = POOL;
	cfg.uring_slots = TABLE - POOL;
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "uring-slots: mrcache_create: %s\n", strerror(-rc));
		return 1;
	}
	rc = mrcache_get(cache, buf, BUF_LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);
	if (rc) {
		fprintf(stderr, "uring-slots: mrcache_get: %s\n", strerror(-rc));
		return 1;
	}
	slot = (int)mrcache_region_key(r);
	n1 = read_fixed(&ring, fd, app, 0);
	n2 = read_fixed(&ring, fd, buf, slot);
	printf("engine's slot 0: read %d; cache's slot %d: read %d\n", n1, slot, n2);
	mrcache_put(cache, r);
	mrcache_destroy(cache);
	/* The engine's buffer is still registered after the cache is gone. */
	rc = read_fixed(&ring, fd, app, 0);
	printf("after destroy, engine's slot 0: read %d\n", rc);
	io_uring_queue_exit(&ring);
	return n1 > 0 && n2 == n1 && rc == n1 && slot >= POOL && slot < TABLE &&
	       !memcmp(app, buf, (size_t)n1) ? 0 : 1;
}
