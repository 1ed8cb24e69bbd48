/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee: calls that take a cached shared file mapping's pages
 * without unmapping or discarding that mapping by name.  The range is a
 * MAP_SHARED mapping of a memfd; the operation, made by this process:
 *   remap-file-pages   remap_file_pages() of the range to another part of
 *                      the file (the kernel's internal MAP_FIXED mmap)
 *   madv-remove-alias  MADV_REMOVE through a second mapping of the file
 *   punch-hole         fallocate(PUNCH_HOLE) of the file
 *   ftruncate          ftruncate() to 0 and back
 *   truncate-path      truncate() by path to 0, and ftruncate() back
 * Afterwards the range maps fresh pages; a registration made before still
 * pins the old ones.  Every test program links libmrcache-hooks, so the
 * uffd monitor here is uffd with the interposed calls; without them
 * (test-uffd-file-gaps runs this program built without libmrcache-hooks)
 * the kernel sends userfaultfd no event for any of these.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "guarantee.h"

static int memfd = -1;

static int prepare_memfd(struct guarantee_ctx *c, size_t file_len)
{
	c->len = GUARANTEE_LEN;
	memfd = memfd_create("guarantee-file", MFD_CLOEXEC);
	if (memfd < 0)
		return -errno;
	if (ftruncate(memfd, (off_t)file_len))
		return -errno;
	c->addr = mmap(NULL, c->len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (c->addr == MAP_FAILED) {
		c->addr = NULL;
		return -errno;
	}
	return 0;
}

static int prepare_file(struct guarantee_ctx *c)
{
	return prepare_memfd(c, GUARANTEE_LEN);
}

/* Room for remap_file_pages() to map the second half instead. */
static int prepare_file_double(struct guarantee_ctx *c)
{
	return prepare_memfd(c, 2 * GUARANTEE_LEN);
}

static int prepare_alias(struct guarantee_ctx *c)
{
	int rc = prepare_file(c);

	if (rc)
		return rc;
	c->aux_len = c->len;
	c->aux = mmap(NULL, c->aux_len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (c->aux == MAP_FAILED) {
		c->aux = NULL;
		return -errno;
	}
	return 0;
}

static void release_file(struct guarantee_ctx *c)
{
	if (c->addr)
		munmap(c->addr, c->len);
	if (c->aux)
		munmap(c->aux, c->aux_len);
	if (memfd >= 0)
		close(memfd);
	memfd = -1;
}

static int apply_remap_file_pages(struct guarantee_ctx *c)
{
	size_t pgoff = GUARANTEE_LEN / (size_t)getpagesize();

	return remap_file_pages(c->addr, c->len, 0, pgoff, 0) ? -errno : 0;
}

static int apply_remove_alias(struct guarantee_ctx *c)
{
	return madvise(c->aux, c->aux_len, MADV_REMOVE) ? -errno : 0;
}

static int apply_punch_hole(struct guarantee_ctx *c)
{
	return fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			 (off_t)c->len) ? -errno : 0;
}

static int apply_ftruncate(struct guarantee_ctx *c)
{
	if (ftruncate(memfd, 0) || ftruncate(memfd, (off_t)c->len))
		return -errno;
	return 0;
}

static int apply_truncate_path(struct guarantee_ctx *c)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	if (truncate(path, 0) || ftruncate(memfd, (off_t)c->len))
		return -errno;
	return 0;
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "remap-file-pages", prepare_file_double, apply_remap_file_pages,
		  release_file, NULL },
		{ "madv-remove-alias", prepare_alias, apply_remove_alias, release_file, NULL },
		{ "punch-hole", prepare_file, apply_punch_hole, release_file, NULL },
		{ "ftruncate", prepare_file, apply_ftruncate, release_file, NULL },
		{ "truncate-path", prepare_file, apply_truncate_path, release_file, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
