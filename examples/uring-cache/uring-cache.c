/* SPDX-License-Identifier: MIT */
/*
 * uring-cache: read a file into io_uring fixed buffers that mrcache
 * registers.  Reading into the same buffer again is a cache hit (no
 * registration); unmapping the buffer drops its registration, so a buffer
 * mapped later, usually at the same address, is registered afresh.
 *   uring-cache [FILE]     (default: this program)
 * Exit 0, 1 on failure, 77 when io_uring is not available here.
 */
#include <fcntl.h>
#include <liburing.h>
#include <sys/mman.h>
#include <mrcache.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BUF_LEN (1u << 20)

static int read_fixed(struct io_uring *ring, int fd, void *buf, struct mrcache_region *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int rc;

	io_uring_prep_read_fixed(sqe, fd, buf, BUF_LEN, 0, (int)mrcache_region_key(r));
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

/* One transfer: get the buffer's registration, use it, put it back. */
static int read_into(struct mrcache *cache, struct io_uring *ring, int fd, void *buf)
{
	struct mrcache_region *r;
	int rc = mrcache_get(cache, buf, BUF_LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);

	if (rc)
		return rc;
	rc = read_fixed(ring, fd, buf, r);
	mrcache_put(cache, r);
	return rc;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/proc/self/exe";
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *cache;
	struct io_uring ring;
	void *buf;
	int fd, rc, i;

	rc = io_uring_queue_init(8, &ring, 0);
	if (rc) {
		fprintf(stderr, "uring-cache: no io_uring here (%s)\n", strerror(-rc));
		return 77;
	}
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &ring;
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "uring-cache: mrcache_create: %s\n", strerror(-rc));
		return 1;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	for (i = 0; i < 2; i++) {	/* a buffer read into twice, then unmapped */
		buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return 1;
		rc = read_into(cache, &ring, fd, buf);
		if (rc >= 0)
			rc = read_into(cache, &ring, fd, buf);
		munmap(buf, BUF_LEN);
		if (rc < 0) {
			fprintf(stderr, "uring-cache: read: %s\n", strerror(-rc));
			return 1;
		}
	}
	mrcache_progress(cache);	/* reclaim what the munmap invalidated */
	mrcache_stats_get(cache, &st);
	printf("monitor %s: %llu hits, %llu registrations, %llu deregistrations\n",
	       mrcache_monitor_name(st.monitor), (unsigned long long)st.hits,
	       (unsigned long long)st.registrations, (unsigned long long)st.deregistrations);
	mrcache_destroy(cache);
	io_uring_queue_exit(&ring);
	close(fd);
	/* Each buffer: one registration, one hit, dropped at its munmap(). */
	return st.hits == 2 && st.registrations == 2 && st.deregistrations == 2 ? 0 : 1;
}
