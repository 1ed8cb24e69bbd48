/* SPDX-License-Identifier: MIT */
/*
 * uffd monitor on hugetlb memory: userfaultfd registers hugetlb ranges
 * only at huge page granularity, and a cached range is 4 KiB aligned.  The
 * monitor must still watch it itself, not fall back to the interposed
 * calls (which raw system calls bypass): a 64 KiB range in the middle of a
 * huge page (private MAP_HUGETLB, and a shared hugetlb memfd) is cached,
 * then raw syscalls unmap the page, discard it (MADV_DONTNEED) or move it,
 * and the next get must miss.  Raw syscalls: only userfaultfd sees them.
 * Huge pages are reserved through /proc/sys/vm/nr_hugepages for the test
 * (restored at exit); none: skip with the reason.
 * Negative control: the same under monitor `none` hits.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hugetlb.h"
#include "testbackend.h"
#include "testutil.h"

#define LEN (64ul << 10)

static size_t huge;

static char *raw_mmap(void *at, size_t len, int flags, int fd)
{
	return (char *)syscall(SYS_mmap, at, len, PROT_READ | PROT_WRITE, flags, fd, 0);
}

/* One huge page, private or from a hugetlb memfd (shared). */
static char *map_page(char *at, int shared)
{
	int flags = at ? MAP_FIXED_NOREPLACE : 0, fd = -1;
	char *p;

	if (shared) {
		fd = (int)syscall(SYS_memfd_create, "mrc-huge", MFD_HUGETLB);
		if (fd < 0 || ftruncate(fd, (off_t)huge))
			return MAP_FAILED;
		flags |= MAP_SHARED;
	} else {
		flags |= MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB;
	}
	p = raw_mmap(at, huge, flags, fd);
	if (fd >= 0)
		close(fd);
	return p;
}

static int op_munmap(char *p, int shared)
{
	if (syscall(SYS_munmap, p, huge))
		return -1;
	return map_page(p, shared) == p ? 0 : -1;
}

static int op_dontneed(char *p, int shared)
{
	return syscall(SYS_madvise, p, huge, MADV_DONTNEED) ? -1 : 0;
}

static int op_mremap_move(char *p, int shared)
{
	char *r = raw_mmap(NULL, 2 * huge, MAP_PRIVATE | MAP_ANONYMOUS, -1);
	char *dst = (char *)(((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1));
	int rc;

	if (r == MAP_FAILED)
		return -1;
	rc = (char *)syscall(SYS_mremap, p, huge, huge, MREMAP_MAYMOVE | MREMAP_FIXED,
			     dst) == dst ? 0 : -1;
	syscall(SYS_munmap, r, 2 * huge);
	return rc ? rc : map_page(p, shared) == p ? 0 : -1;
}

static const struct op {
	const char *name;
	int (*apply)(char *p, int shared);
} ops[] = {
	{ "munmap", op_munmap },
	{ "madv-dontneed", op_dontneed },
	{ "mremap-move", op_mremap_move },
};

/* Get the range in the middle of the page: 1 missed, 0 hit, -errno. */
static int get_missed(struct mrcache *c, char *p)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;
	int rc;

	mrcache_stats_get(c, &a);
	rc = mrcache_get(c, p + huge / 2, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);
	if (rc)
		return rc;
	mrcache_put(c, r);
	mrcache_stats_get(c, &b);
	return b.misses > a.misses;
}

static void run(enum mrcache_monitor_kind monitor, const struct op *op, int shared)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	char *p = map_page(NULL, shared);
	int expect = monitor != MRCACHE_MONITOR_NONE, got;

	if (p == MAP_FAILED) {
		fprintf(stderr, "mapping a huge page: %s\n", strerror(errno));
		test_failures++;
		return;
	}
	memset(p, 7, huge);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, monitor);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	CHECK_EQ(get_missed(c, p), 1);
	CHECK_EQ(get_missed(c, p), 0);
	if (op->apply(p, shared)) {
		fprintf(stderr, "%s failed: %s\n", op->name, strerror(errno));
		test_failures++;
	}
	got = get_missed(c, p);
	if (got != expect) {
		fprintf(stderr, "%s (%s) under %s: the get after it %s\n", op->name,
			shared ? "shared" : "private", mrcache_monitor_name(monitor),
			got < 0 ? strerror(-got) : got ? "missed" : "hit");
		test_failures++;
	}
	printf("%-14s %-7s %-5s %s\n", op->name, shared ? "shared" : "private",
	       mrcache_monitor_name(monitor),
	       got == expect ? (expect ? "miss" : "hit (negative control)") : "WRONG");
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	syscall(SYS_munmap, p, huge);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	char why[160];

	c = test_backend_cache_or_skip(&tb, &cfg, MRCACHE_MONITOR_UFFD);
	mrcache_destroy(c);
	test_backend_fini(&tb);
	huge = test_hugetlb_reserve(4, why, sizeof(why));
	if (!huge)
		SKIP("no huge page: %s", why);

	alarm(60);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		for (int shared = 0; shared < 2; shared++) {
			run(MRCACHE_MONITOR_NONE, &ops[i], shared);
			run(MRCACHE_MONITOR_UFFD, &ops[i], shared);
		}
	return test_result();
}
