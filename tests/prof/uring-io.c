/* SPDX-License-Identifier: MIT */
/*
 * uring-io.c - for truth.sh: a program of known VM activity and I/O that
 * uses libmrcache (bpf monitor, io_uring backend), as an io_uring storage
 * engine would.  What it does itself, exactly:
 *
 *   mmap    12 x 1 MiB anonymous (VM_MAPS) + URING_ROUNDS malloc'd
 *           buffers of 256 KiB above the mmap threshold (glibc maps them)
 *   munmap  the same: 12 + URING_ROUNDS
 *   mremap  5 grows of one mapping, 1 MiB -> 2 MiB ... 6 MiB
 *   madvise 3 x MADV_DONTNEED of 1 MiB
 *   I/O     SYS_READS read(2)s of 64 KiB, URING_ROUNDS io_uring reads of
 *           64 KiB into a malloc'd buffer (IORING_OP_READ) and
 *           URING_ROUNDS of 64 KiB into a fixed buffer the cache
 *           registered (IORING_OP_READ_FIXED), all from a 64 KiB memfd
 *
 * Everything else is the library's: libbpf reading the kernel's BTF
 * (thousands of reads), the cache's address-space reservations (16 GiB of
 * slabs, the LRU heap), its monitor's maps, and with MRCACHE_PROF the
 * profiler's own page per thread.  Exit 77 when the bpf monitor or
 * io_uring cannot start here.
 */
#include <errno.h>
#include <liburing.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mrcache.h"

#define MIB		(1ul << 20)
#define IO_LEN		(64 * 1024)
#define HEAP_LEN	(256 * 1024)
#define VM_MAPS		12
#define MREMAPS		5
#define MADVISES	3
#define SYS_READS	10
#define URING_ROUNDS	20

static int uring_read(struct io_uring *ring, int fd, void *buf, int fixed_index)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int rc;

	if (fixed_index >= 0)
		io_uring_prep_read_fixed(sqe, fd, buf, IO_LEN, 0, fixed_index);
	else
		io_uring_prep_read(sqe, fd, buf, IO_LEN, 0);
	rc = io_uring_submit_and_wait(ring, 1);
	if (rc < 0)
		return rc;
	rc = io_uring_peek_cqe(ring, &cqe);
	if (rc)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return rc == IO_LEN ? 0 : -EIO;
}

static int vm_activity(void)
{
	char *p[VM_MAPS], *m;

	for (int i = 0; i < VM_MAPS; i++) {
		p[i] = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p[i] == MAP_FAILED)
			return -1;
		p[i][0] = 1;
	}
	m = p[0];
	for (int i = 0; i < MREMAPS; i++) {
		m = mremap(m, (size_t)(i + 1) * MIB, (size_t)(i + 2) * MIB, MREMAP_MAYMOVE);
		if (m == MAP_FAILED)
			return -1;
	}
	p[0] = m;
	for (int i = 0; i < MADVISES; i++)
		if (madvise(p[1 + i], MIB, MADV_DONTNEED))
			return -1;
	for (int i = 0; i < VM_MAPS; i++)
		if (munmap(p[i], i ? MIB : (MREMAPS + 1) * MIB))
			return -1;
	return 0;
}

int main(void)
{
	struct mrcache_config cfg;
	struct mrcache_region *r;
	struct io_uring ring;
	struct mrcache *c;
	char *fixed;
	int fd, rc;

	/* A fixed threshold: glibc maps every 256 KiB malloc, and does not
	 * raise the threshold after the first free. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	fd = memfd_create("uring-io", 0);
	if (fd < 0 || ftruncate(fd, IO_LEN) < 0)
		return 1;
	rc = io_uring_queue_init(8, &ring, 0);
	if (rc) {
		fprintf(stderr, "uring-io: no io_uring here: %s\n", strerror(-rc));
		return 77;
	}
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &ring;
	cfg.monitor = MRCACHE_MONITOR_BPF;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		fprintf(stderr, "uring-io: monitor bpf: %s\n", strerror(-rc));
		return 77;
	}
	if (vm_activity())
		return 1;
	for (int i = 0; i < SYS_READS; i++) {
		char *b = malloc(HEAP_LEN);

		if (!b || pread(fd, b, IO_LEN, 0) != IO_LEN)
			return 1;
		free(b);
	}
	/* One fixed buffer, registered by the cache at its first get. */
	fixed = mmap(NULL, IO_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fixed == MAP_FAILED)
		return 1;
	for (int i = 0; i < URING_ROUNDS; i++) {
		char *b = malloc(HEAP_LEN);

		if (!b || uring_read(&ring, fd, b, -1))
			return 1;
		free(b);
		rc = mrcache_get(c, fixed, IO_LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);
		if (rc)
			return 1;
		rc = uring_read(&ring, fd, fixed, (int)mrcache_region_key(r));
		mrcache_put(c, r);
		if (rc)
			return 1;
	}
	munmap(fixed, IO_LEN);
	mrcache_destroy(c);
	io_uring_queue_exit(&ring);
	return 0;
}
