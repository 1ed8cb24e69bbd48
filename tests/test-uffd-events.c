/* SPDX-License-Identifier: MIT */
/*
 * uffd monitor: every userfaultfd event it relies on invalidates a cached
 * range, through raw syscalls that libmrcache's interposed definitions
 * never see (so the invalidation can only come from the handler thread):
 * UNMAP (munmap, mmap MAP_FIXED over, mremap shrink), REMOVE (madvise
 * DONTNEED, FREE, REMOVE) and REMAP (mremap move).  Touching a watched
 * range after MADV_DONTNEED must not hang (no fault is ever delivered).
 * Negative control: the same operations under monitor `none` hit.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define LEN (64ul << 10)

struct op {
	const char *name;
	int shared;
	enum mrcache_cause cause;
	/* Leaves fresh memory at [p, p+LEN); returns 0 or -1. */
	int (*apply)(char *p);
};

static void *raw_mmap(void *at, size_t len, int flags)
{
	return (void *)syscall(SYS_mmap, at, len, PROT_READ | PROT_WRITE,
			       flags | MAP_ANONYMOUS, -1, 0);
}

static int remap_fresh(char *p)
{
	return raw_mmap(p, LEN, MAP_PRIVATE | MAP_FIXED_NOREPLACE) == p ? 0 : -1;
}

static int op_munmap(char *p)
{
	return syscall(SYS_munmap, p, LEN) ? -1 : remap_fresh(p);
}

static int op_map_fixed(char *p)
{
	return raw_mmap(p, LEN, MAP_PRIVATE | MAP_FIXED) == p ? 0 : -1;
}

static int op_dontneed(char *p)
{
	if (syscall(SYS_madvise, p, LEN, MADV_DONTNEED))
		return -1;
	p[0] = 1;	/* a fault on the watched range must not hang */
	return 0;
}

static int op_free(char *p)
{
	return syscall(SYS_madvise, p, LEN, MADV_FREE) ? -1 : 0;
}

static int op_remove(char *p)
{
	return syscall(SYS_madvise, p, LEN, MADV_REMOVE) ? -1 : 0;
}

static int op_mremap_move(char *p)
{
	char *q = raw_mmap(NULL, LEN, MAP_PRIVATE);
	void *moved;

	if (q == MAP_FAILED)
		return -1;
	moved = (void *)syscall(SYS_mremap, p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	if (moved != q)
		return -1;
	syscall(SYS_munmap, q, LEN);
	return remap_fresh(p);
}

static int op_mremap_shrink(char *p)
{
	if ((void *)syscall(SYS_mremap, p, LEN, LEN / 2, 0) != p)
		return -1;
	return raw_mmap(p + LEN / 2, LEN / 2, MAP_PRIVATE | MAP_FIXED_NOREPLACE) ==
	       p + LEN / 2 ? 0 : -1;
}

static const struct op ops[] = {
	{ "munmap", 0, MRCACHE_CAUSE_UNMAP, op_munmap },
	{ "mmap-fixed", 0, MRCACHE_CAUSE_UNMAP, op_map_fixed },
	{ "mremap-shrink", 0, MRCACHE_CAUSE_UNMAP, op_mremap_shrink },
	{ "madv-dontneed", 0, MRCACHE_CAUSE_DISCARD, op_dontneed },
	{ "madv-free", 0, MRCACHE_CAUSE_DISCARD, op_free },
	{ "madv-remove", 1, MRCACHE_CAUSE_DISCARD, op_remove },
	{ "mremap-move", 0, MRCACHE_CAUSE_REMAP, op_mremap_move },
};

/* Get [p, p+LEN): 1 if it missed, 0 if it hit, -1 on error. */
static int get_missed(struct mrcache *c, char *p)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;

	mrcache_stats_get(c, &a);
	if (mrcache_get(c, p, LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r))
		return -1;
	mrcache_put(c, r);
	mrcache_stats_get(c, &b);
	return b.misses > a.misses;
}

static void run(enum mrcache_monitor_kind monitor, const struct op *op)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;
	int flags = (op->shared ? MAP_SHARED : MAP_PRIVATE);
	char *p = raw_mmap(NULL, LEN, flags);
	int expect = monitor != MRCACHE_MONITOR_NONE;

	CHECK(p != MAP_FAILED);
	memset(p, 7, LEN);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, monitor);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	CHECK_EQ(get_missed(c, p), 1);
	CHECK_EQ(get_missed(c, p), 0);
	if (op->apply(p)) {
		fprintf(stderr, "%s failed: %s\n", op->name, strerror(errno));
		test_failures++;
	}
	if (get_missed(c, p) != expect) {
		fprintf(stderr, "%s under %s: the get after it %s\n", op->name,
			mrcache_monitor_name(monitor), expect ? "hit" : "missed");
		test_failures++;
	}
	mrcache_stats_get(c, &st);
	if (expect)
		CHECK(st.invalidations[op->cause] >= 1);
	printf("%-14s %-5s %s\n", op->name, mrcache_monitor_name(monitor),
	       expect ? "miss after the event" : "hit (negative control)");
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	syscall(SYS_munmap, p, LEN);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	c = test_backend_cache_or_skip(&tb, &cfg, MRCACHE_MONITOR_UFFD);
	mrcache_destroy(c);
	test_backend_fini(&tb);

	alarm(60);	/* a hang (an undelivered fault) fails the test */
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		run(MRCACHE_MONITOR_NONE, &ops[i]);
		run(MRCACHE_MONITOR_UFFD, &ops[i]);
	}
	return test_result();
}
