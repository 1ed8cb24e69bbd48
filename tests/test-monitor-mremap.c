/* SPDX-License-Identifier: MIT */
/*
 * A monitor must not change what the application's own mremap() returns.
 * A cached sub-range of a mapping (the uffd monitor used to register just
 * that sub-range, which splits the VMA) must leave an mremap of the whole
 * mapping working under every monitor: grow where it must move, grow in
 * place, a move to a fixed address, and a move after a grow in place and
 * a flush (the unwatch must not split the grown mapping either).  After a
 * move, a get of the old sub-range must miss under a real monitor.
 *
 * uffd runs again with PROCMAP_QUERY hidden (kernels before 6.11: the
 * monitor then reads /proc/self/maps).
 *
 * Negative controls: a mapping split by mprotect() makes the same mremap
 * fail with EFAULT (what a split does, seen by this test's checks), and
 * under `none` the get after the move hits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "procmap.h"
#include "testbackend.h"
#include "testutil.h"

#define PG	4096ul
#define LEN	(16 * PG)
#define SUB	(4 * PG)	/* the cached sub-range: [p + SUB, p + 2 * SUB) */

static char *map_at(char *at, size_t len, int prot)
{
	char *p = mmap(at, len, prot, MAP_PRIVATE | MAP_ANONYMOUS |
		       (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	return p == MAP_FAILED || (at && p != at) ? NULL : p;
}

/* A mapping of LEN with `room` free bytes after it (reserved, then given
 * back, so growing in place is possible) or a blocker page there. */
static char *map_with(size_t room, char **blocker)
{
	char *p = map_at(NULL, LEN + (room ? room : PG), PROT_NONE);

	if (!p)
		return NULL;
	munmap(p, LEN + (room ? room : PG));
	if (!map_at(p, LEN, PROT_READ | PROT_WRITE))
		return NULL;
	memset(p, 1, LEN);
	*blocker = room ? NULL : map_at(p + LEN, PG, PROT_READ);
	return p;
}

/* Get the sub-range: 1 on a miss, 0 on a hit, -1 on an error. */
static int get_missed(struct mrcache *c, char *p)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;

	mrcache_stats_get(c, &a);
	if (mrcache_get(c, p + SUB, SUB, 0, &r))
		return -1;
	mrcache_put(c, r);
	mrcache_stats_get(c, &b);
	return b.misses > a.misses;
}

static void cache_sub_range(struct mrcache *c, char *p)
{
	CHECK_EQ(get_missed(c, p), 1);
	CHECK_EQ(get_missed(c, p), 0);
}

static int report(const char *what, enum mrcache_monitor_kind m, void *rc)
{
	if (rc != MAP_FAILED)
		return 0;
	fprintf(stderr, "%s under %s: mremap failed: %s\n", what,
		mrcache_monitor_name(m), strerror(errno));
	test_failures++;
	return -1;
}

/* After a move: fresh memory at the old place; the old sub-range misses
 * under a real monitor and hits under `none`. */
static void check_moved(struct mrcache *c, enum mrcache_monitor_kind m,
			const char *what, char *old)
{
	int expect = m != MRCACHE_MONITOR_NONE;

	CHECK(map_at(old, LEN, PROT_READ | PROT_WRITE) == old);
	if (get_missed(c, old) != expect) {
		fprintf(stderr, "%s under %s: the get of the old range %s\n", what,
			mrcache_monitor_name(m), expect ? "hit" : "missed");
		test_failures++;
	}
	munmap(old, LEN);
}

static void grow_moving(struct mrcache *c, enum mrcache_monitor_kind m)
{
	char *blocker, *p = map_with(0, &blocker), *q;

	CHECK(p && blocker);
	cache_sub_range(c, p);
	q = mremap(p, LEN, 2 * LEN, MREMAP_MAYMOVE);
	munmap(blocker, PG);
	if (report("grow (moving)", m, q)) {
		munmap(p, LEN);
		return;
	}
	CHECK(q != p);
	if (q != p)
		check_moved(c, m, "grow (moving)", p);
	munmap(q, 2 * LEN);
}

static void grow_in_place_then_move(struct mrcache *c, enum mrcache_monitor_kind m)
{
	char *blocker, *p = map_with(LEN, &blocker), *q, *dst;

	CHECK(p != NULL);
	cache_sub_range(c, p);
	q = mremap(p, LEN, 2 * LEN, 0);
	if (report("grow (in place)", m, q)) {
		munmap(p, LEN);
		return;
	}
	/* Unwatching the sub-range must leave the grown mapping whole. */
	CHECK(mrcache_flush(c) >= 0);
	dst = map_at(NULL, 2 * LEN, PROT_NONE);
	q = mremap(p, 2 * LEN, 2 * LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (report("move after a grow in place and a flush", m, q)) {
		munmap(p, 2 * LEN);
		munmap(dst, 2 * LEN);
		return;
	}
	munmap(q, 2 * LEN);
}

static void move_fixed(struct mrcache *c, enum mrcache_monitor_kind m)
{
	char *blocker, *p = map_with(LEN, &blocker), *q;
	char *dst = map_at(NULL, LEN, PROT_NONE);

	CHECK(p && dst);
	cache_sub_range(c, p);
	q = mremap(p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (report("move (fixed)", m, q)) {
		munmap(p, LEN);
		munmap(dst, LEN);
		return;
	}
	CHECK(q == dst);
	check_moved(c, m, "move (fixed)", p);
	munmap(q, LEN);
}

/* The control: a split mapping cannot be remapped as a whole. */
static void split_control(void)
{
	char *blocker, *p = map_with(LEN, &blocker), *q;

	CHECK(p != NULL);
	CHECK_EQ(mprotect(p + SUB, SUB, PROT_READ), 0);
	q = mremap(p, LEN, 2 * LEN, MREMAP_MAYMOVE);
	CHECK(q == MAP_FAILED && errno == EFAULT);
	printf("control: a split mapping: mremap fails (%s)\n",
	       q == MAP_FAILED ? strerror(errno) : "it did not");
	munmap(q == MAP_FAILED ? p : q, q == MAP_FAILED ? LEN : 2 * LEN);
}

/* Every case under monitor m: 1 if it ran, 0 if it cannot start here. */
static int run_monitor(enum mrcache_monitor_kind m, const char *how)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int before = test_failures, rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		printf("%-6s SKIP (cannot start here: %s)\n", mrcache_monitor_name(m),
		       strerror(-rc));
		CHECK(m != MRCACHE_MONITOR_NONE);
		return 0;
	}
	grow_moving(c, m);
	grow_in_place_then_move(c, m);
	move_fixed(c, m);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	printf("%-6s %s%s\n", mrcache_monitor_name(m),
	       test_failures == before ? "PASS" : "FAIL", how);
	return 1;
}

/* uffd again where PROCMAP_QUERY fails as before Linux 6.11 (it then
 * reads /proc/self/maps), in a child: the filter cannot be undone. */
static void run_uffd_without_procmap_query(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		if (test_hide_procmap_query()) {
			printf("uffd   SKIP without PROCMAP_QUERY (no seccomp)\n");
			_exit(0);
		}
		run_monitor(MRCACHE_MONITOR_UFFD, " (without PROCMAP_QUERY)");
		_exit(test_result());
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	static const enum mrcache_monitor_kind mons[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
	};
	unsigned ran = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	split_control();
	for (size_t i = 0; i < sizeof(mons) / sizeof(mons[0]); i++)
		ran += run_monitor(mons[i], "") && mons[i] != MRCACHE_MONITOR_NONE;
	run_uffd_without_procmap_query();
	if (!test_failures && !ran)
		SKIP("no real monitor starts here");
	return test_result();
}
