/* SPDX-License-Identifier: MIT */
/*
 * uffd: one userfaultfd serves every cache of the process, and a range
 * watched twice stays registered until its last watch goes:
 *  - two caches cache the same range; destroying one must not unregister
 *    it from under the other;
 *  - a merged region replaces the region it overlaps; reclaiming the old
 *    one must not unregister the part the merged one still covers;
 *  - after fork, the child's own cache gets its own userfaultfd and
 *    handler, and the parent's keeps working.
 * Each check unmaps with a raw syscall (only userfaultfd can see it) and
 * expects the next get to miss.  Negative control: under `none` the first
 * check's get hits.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define LEN (64ul << 10)

/* TSan cannot follow a child that starts threads after a fork of a
 * threaded process (the parent has the handler thread). */
#if defined(__SANITIZE_THREAD__)
#define CHECK_FORK 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHECK_FORK 0
#endif
#endif
#ifndef CHECK_FORK
#define CHECK_FORK 1
#endif

static char *raw_map(size_t len)
{
	return (char *)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* Raw munmap + remap of [p, p+len); the hole is refilled without
 * MAP_FIXED, so memory another thread mapped there meanwhile is safe. */
static void replace(char *p, size_t len)
{
	CHECK_EQ(syscall(SYS_munmap, p, len), 0);
	CHECK((char *)syscall(SYS_mmap, p, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) == p);
}

static int get_missed(struct mrcache *c, char *p, size_t len)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;

	mrcache_stats_get(c, &a);
	if (mrcache_get(c, p, len, 0, &r))
		return -1;
	mrcache_put(c, r);
	mrcache_stats_get(c, &b);
	return b.misses > a.misses;
}

static struct mrcache *make(struct test_backend *tb, enum mrcache_monitor_kind m)
{
	struct mrcache_config cfg;
	struct mrcache *c = NULL;

	test_backend_config(tb, &cfg, m);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	return c;
}

/* Two caches on one range; the second goes away.  1 if the first still
 * sees a raw unmap. */
static int two_caches(enum mrcache_monitor_kind m)
{
	struct test_backend tb;
	struct mrcache *a, *b;
	char *p = raw_map(LEN);
	int seen;

	test_backend_init(&tb, 0);
	a = make(&tb, m);
	b = make(&tb, m);
	CHECK_EQ(get_missed(a, p, LEN), 1);
	CHECK_EQ(get_missed(b, p, LEN), 1);
	CHECK_EQ(mrcache_destroy(b), 0);
	replace(p, LEN);
	seen = get_missed(a, p, LEN) == 1;
	CHECK_EQ(mrcache_destroy(a), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	syscall(SYS_munmap, p, LEN);
	return seen;
}

/* [p, p+LEN) cached, then [p+LEN/2, p+3LEN/2) merges with it. */
static int merged(void)
{
	struct test_backend tb;
	struct mrcache *c;
	char *p = raw_map(2 * LEN);
	int seen;

	test_backend_init(&tb, 0);
	c = make(&tb, MRCACHE_MONITOR_UFFD);
	CHECK_EQ(get_missed(c, p, LEN), 1);
	CHECK_EQ(get_missed(c, p + LEN / 2, LEN), 1);	/* merges: [p, p+3LEN/2) */
	mrcache_progress(c);		/* reclaims the replaced region */
	CHECK_EQ(get_missed(c, p, LEN), 0);		/* inside the merged one */
	replace(p, LEN / 2);
	seen = get_missed(c, p, LEN) == 1;
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	syscall(SYS_munmap, p, 2 * LEN);
	return seen;
}

static int child_cache(void)
{
	struct test_backend tb;
	struct mrcache *c;
	char *p = raw_map(LEN);

	test_backend_init(&tb, 0);
	c = make(&tb, MRCACHE_MONITOR_UFFD);
	if (!c)
		return 1;
	CHECK_EQ(get_missed(c, p, LEN), 1);
	replace(p, LEN);
	CHECK_EQ(get_missed(c, p, LEN), 1);
	CHECK_EQ(mrcache_destroy(c), 0);
	return test_result();
}

static int after_fork(void)
{
	struct test_backend tb;
	struct mrcache *c;
	char *p = raw_map(LEN);
	int status, seen;
	pid_t pid;

	test_backend_init(&tb, 0);
	c = make(&tb, MRCACHE_MONITOR_UFFD);
	CHECK_EQ(get_missed(c, p, LEN), 1);
	pid = fork();
	if (pid == 0)
		_exit(child_cache());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	replace(p, LEN);
	seen = get_missed(c, p, LEN) == 1;
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return seen;
}

int main(void)
{
	struct test_backend tb;
	struct mrcache *c;
	struct mrcache_config cfg;
	int rc;

	c = test_backend_cache_or_skip(&tb, &cfg, MRCACHE_MONITOR_UFFD);
	mrcache_destroy(c);

	alarm(60);
	rc = two_caches(MRCACHE_MONITOR_NONE);
	printf("none, two caches:     %s (negative control)\n", rc ? "miss" : "hit");
	CHECK(!rc);
	rc = two_caches(MRCACHE_MONITOR_UFFD);
	printf("uffd, two caches:     %s\n", rc ? "miss" : "hit");
	CHECK(rc);
	rc = merged();
	printf("uffd, merged region:  %s\n", rc ? "miss" : "hit");
	CHECK(rc);
	if (CHECK_FORK) {
		rc = after_fork();
		printf("uffd, after a fork:   %s\n", rc ? "miss" : "hit");
		CHECK(rc);
	} else {
		printf("uffd, after a fork:   not checked under TSan\n");
	}
	return test_result();
}
