/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee on hugetlb memory, where the kernel rounds the lengths
 * of mmap, mremap and shmat up to the huge page: 4 KiB there replace the
 * whole huge page.  The range under test lies in the middle of a huge page
 * (or of the second one), and each operation names only the first 4 KiB
 * of the page (or of the mapping), as an application that does not know
 * the page size would:
 *  - mmap(p, 4096, MAP_FIXED | MAP_HUGETLB), and the same from a hugetlb
 *    memfd (the page size comes from the file);
 *  - mremap(p, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, q): the page moves;
 *  - mremap(p, H + 4096, 4096, 0) of two huge pages: the second goes;
 *  - shmat(SHM_HUGETLB segment of 4096 bytes, p, SHM_REMAP);
 *  - munmap of the whole page (the kernel refuses a shorter one).
 * Huge pages are reserved through /proc/sys/vm/nr_hugepages for the test
 * and the old value restored after; no huge page: skip with the reason.
 * Negative control: monitor `none` hits and the oracle sees stale data.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include "guarantee.h"
#include "hugetlb.h"

#define TEST_LEN (64 * 1024)

static size_t huge;	/* the default huge page size */

static void *map_huge(void *at, size_t len)
{
	void *p = mmap(at, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       MAP_HUGETLB | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	return p == MAP_FAILED || (at && p != at) ? NULL : p;
}

/* `pages` huge pages at c->aux; the range under test in the middle of
 * page `in`. */
static int prepare(struct guarantee_ctx *c, size_t pages, size_t in)
{
	c->aux_len = pages * huge;
	c->aux = map_huge(NULL, c->aux_len);
	if (!c->aux) {
		snprintf(c->why, sizeof(c->why), "mmap(MAP_HUGETLB): %s", strerror(errno));
		return GUARANTEE_SKIP;
	}
	memset(c->aux, 1, c->aux_len);
	c->addr = (char *)c->aux + in * huge + huge / 2;
	c->len = TEST_LEN;
	return 0;
}

static int prepare_one(struct guarantee_ctx *c)
{
	return prepare(c, 1, 0);
}

static int prepare_two(struct guarantee_ctx *c)
{
	return prepare(c, 2, 1);
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->aux, c->aux_len);
}

static int apply_mmap_fixed(struct guarantee_ctx *c)
{
	void *p = mmap(c->aux, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_FIXED, -1, 0);

	return p == c->aux ? 0 : -errno;
}

static int apply_mmap_fixed_memfd(struct guarantee_ctx *c)
{
	int fd = memfd_create("mrc-huge", MFD_HUGETLB);
	void *p;

	if (fd < 0 || ftruncate(fd, (off_t)huge))
		return -errno;
	p = mmap(c->aux, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	return p == c->aux ? 0 : -errno;
}

static int apply_mremap_move(struct guarantee_ctx *c)
{
	/* A huge-page-aligned destination inside a reservation. */
	char *r = mmap(NULL, 2 * huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *dst = (char *)(((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1));
	void *p;

	if (r == MAP_FAILED)
		return -errno;
	p = mremap(c->aux, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (p != dst) {
		munmap(r, 2 * huge);
		return -errno;
	}
	munmap(r, 2 * huge);
	return map_huge(c->aux, huge) ? 0 : -errno;
}

static int apply_mremap_shrink(struct guarantee_ctx *c)
{
	char *second = (char *)c->aux + huge;

	if (mremap(c->aux, huge + 4096, 4096, 0) != c->aux)
		return -errno;
	return map_huge(second, huge) ? 0 : -errno;
}

static int apply_shmat_remap(struct guarantee_ctx *c)
{
	int id = shmget(IPC_PRIVATE, 4096, SHM_HUGETLB | IPC_CREAT | 0600);
	void *p;

	if (id < 0)
		return -errno;
	p = shmat(id, c->aux, SHM_REMAP);
	shmctl(id, IPC_RMID, NULL);
	return p == c->aux ? 0 : -errno;
}

static void release_shm(struct guarantee_ctx *c)
{
	shmdt(c->aux);
	munmap(c->aux, c->aux_len);
}

static int apply_munmap(struct guarantee_ctx *c)
{
	if (munmap(c->aux, huge))
		return -errno;
	return map_huge(c->aux, huge) ? 0 : -errno;
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "huge-mmap-fixed", prepare_one, apply_mmap_fixed, release, NULL },
		{ "huge-mmap-memfd", prepare_one, apply_mmap_fixed_memfd, release, NULL },
		{ "huge-mremap-move", prepare_one, apply_mremap_move, release, NULL },
		{ "huge-mremap-shrink", prepare_two, apply_mremap_shrink, release, NULL },
		{ "huge-shmat-remap", prepare_one, apply_shmat_remap, release_shm, NULL },
		{ "huge-munmap", prepare_one, apply_munmap, release, NULL },
	};
	char why[160];

	/* Headroom: the pages the earlier cases' registrations pinned are
	 * given back only as io_uring retires its buffer nodes. */
	huge = test_hugetlb_reserve(32, why, sizeof(why));
	if (!huge) {
		printf("SKIP: no huge page: %s\n", why);
		return 77;
	}
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
