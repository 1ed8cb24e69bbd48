/* SPDX-License-Identifier: MIT */
/*
 * A program for test-hooks-as-needed, linked against the shared libraries
 * in several ways (mk/hooks.mk): it creates a cache with the hooks monitor
 * and prints "started" or the error.  It calls no function of
 * libmrcache-hooks itself (no free, no munmap), so a linker with
 * --as-needed drops that library from it.  With the argument "dlopen" it
 * first loads libmrcache-hooks with dlopen(), too late to interpose.  It
 * says whether the library is in the process before it starts the cache.
 * With the arguments "monitor NAME" it starts that monitor instead and
 * prints which one it got ("started MONITOR").  With "fork-uffd" it runs
 * test-uffd-fork-child's case with plain uffd (no hooks in the process).
 * With "late MONITOR N" it counts the puts right after munmap() that did
 * not yet know the region was gone (test-uffd-thread-gaps).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mrcache.h"

static int reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
	       uint64_t *key)
{
	*handle = addr;
	*key = 0;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	return 0;
}

#define LEN (64ul << 10)

static struct mrcache *uffd_cache(const struct mrcache_backend_ops *ops)
{
	struct mrcache_config cfg;
	struct mrcache *c;

	mrcache_config_init(&cfg);
	cfg.ops = ops;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	cfg.monitor = MRCACHE_MONITOR_UFFD;
	return mrcache_create(&cfg, &c) ? NULL : c;
}

static int get_put(struct mrcache *c, void *p)
{
	struct mrcache_region *r;

	memset(p, 1, LEN);
	if (mrcache_get(c, p, LEN, 0, &r))
		return -1;
	return mrcache_put(c, r);
}

/* The child destroys its copy of the parent's cache, reuses its memory,
 * creates its own cache and unmaps cached memory: its uffd thread must not
 * report into the freed copy. */
static int fork_child(const struct mrcache_backend_ops *ops)
{
	struct mrcache *c = uffd_cache(ops), *own;
	void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int status = 0;
	pid_t pid;

	if (!c || p == MAP_FAILED || get_put(c, p)) {
		printf("uffd cannot start\n");
		return 77;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (mrcache_destroy(c))
			_exit(3);
		for (size_t n = 16; n <= 65536; n += 16)
			memset(malloc(n), 0xa5, n);
		own = uffd_cache(ops);
		if (!own)
			_exit(4);
		for (int i = 0; i < 16; i++) {
			void *q = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (q == MAP_FAILED || get_put(own, q) || munmap(q, LEN))
				_exit(5);
			usleep(2000);
			mrcache_progress(own);
		}
		_exit(mrcache_destroy(own) ? 6 : 0);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status))
		printf("child exit %d\n", WEXITSTATUS(status));
	else
		printf("child signal %d\n", WTERMSIG(status));
	return mrcache_destroy(c) || !WIFEXITED(status) || WEXITSTATUS(status);
}

static unsigned long deregs;	/* atomic */

static int dereg_count(void *arg, void *handle)
{
	__atomic_fetch_add(&deregs, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Issue 25 item 11: right after munmap() returns, is the region already
 * known to be gone?  Each round holds a registration across the munmap of
 * its range; a put that sees the invalidation deregisters at once.
 * Prints how many of n puts did not, under monitor m. */
static int late_puts(enum mrcache_monitor_kind m, int n)
{
	static const struct mrcache_backend_ops ops = { reg, dereg_count };
	struct mrcache_config cfg;
	struct mrcache *c;
	int late = 0;

	mrcache_config_init(&cfg);
	cfg.ops = &ops;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	cfg.monitor = m;
	if (mrcache_create(&cfg, &c)) {
		printf("%s cannot start\n", mrcache_monitor_name(m));
		return 77;
	}
	for (int i = 0; i < n; i++) {
		void *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		struct mrcache_region *r;
		unsigned long before;

		if (p == MAP_FAILED)
			return 2;
		memset(p, 1, LEN);
		if (mrcache_get(c, p, LEN, 0, &r))
			return 2;
		before = __atomic_load_n(&deregs, __ATOMIC_RELAXED);
		munmap(p, LEN);
		mrcache_put(c, r);
		if (__atomic_load_n(&deregs, __ATOMIC_RELAXED) == before)
			late++;
		mrcache_flush(c);
	}
	printf("late %d of %d\n", late, n);
	return mrcache_destroy(c) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct mrcache_backend_ops ops = { reg, dereg };
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;
	int rc, named = argc > 2 && !strcmp(argv[1], "monitor");

	if (argc > 2 && !strcmp(argv[1], "dlopen") && !dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
		printf("dlopen: %s\n", dlerror());
		return 2;
	}
	if (argc > 1 && !strcmp(argv[1], "fork-uffd"))
		return fork_child(&ops);
	if (argc > 3 && !strcmp(argv[1], "late")) {
		enum mrcache_monitor_kind m;

		if (mrcache_monitor_parse(argv[2], &m))
			return 2;
		return late_puts(m, atoi(argv[3]));
	}
	printf("libmrcache-hooks %s\n", dlopen("libmrcache-hooks.so.0", RTLD_NOW | RTLD_NOLOAD) ?
	       "loaded" : "not loaded");
	mrcache_config_init(&cfg);
	cfg.ops = &ops;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	cfg.monitor = MRCACHE_MONITOR_HOOKS;
	if (named && mrcache_monitor_parse(argv[2], &cfg.monitor)) {
		printf("unknown monitor %s\n", argv[2]);
		return 2;
	}
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		printf("create: %s\n", strerror(-rc));
		return 1;
	}
	if (named && mrcache_stats_get(c, &st) == 0)
		printf("started %s\n", mrcache_monitor_name(st.monitor));
	else
		printf("started\n");
	return mrcache_destroy(c) ? 1 : 0;
}
