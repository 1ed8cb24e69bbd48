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
 * prints which one it got ("started MONITOR").
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
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
