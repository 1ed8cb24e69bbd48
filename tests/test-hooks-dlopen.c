/* SPDX-License-Identifier: MIT */
/*
 * libmrcache.so loaded with dlopen() (a plugin, a language binding): the
 * load must work (the hooks use no initial-exec TLS, which would need
 * static TLS a dlopen()ed library may not get), and the hooks monitor,
 * whose definitions cannot interpose there, must refuse to start with
 * -ENOTSUP rather than run blind.  The uffd monitor works.
 * Needs MRC_TEST_BUILD (set by tests/run.sh) to find the shared library.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mrcache.h"
#include "testutil.h"

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

int main(void)
{
	static const struct mrcache_backend_ops ops = { reg, dereg };
	const char *build = getenv("MRC_TEST_BUILD");
	void (*config_init)(struct mrcache_config *);
	int (*create)(const struct mrcache_config *, struct mrcache **);
	int (*destroy)(struct mrcache *);
	struct mrcache_config cfg;
	struct mrcache *c;
	char path[4096];
	void *h;
	int rc;

	if (!build)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	snprintf(path, sizeof(path), "%s/libmrcache.so.0", build);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h && strstr(dlerror(), "No such file"))
		SKIP("%s not built", path);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return 1;
	}
	config_init = (void (*)(struct mrcache_config *))dlsym(h, "mrcache_config_init");
	create = (int (*)(const struct mrcache_config *, struct mrcache **))dlsym(h, "mrcache_create");
	destroy = (int (*)(struct mrcache *))dlsym(h, "mrcache_destroy");
	CHECK(config_init && create && destroy);
	if (!config_init || !create || !destroy)
		return 1;

	config_init(&cfg);
	cfg.ops = &ops;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	cfg.monitor = MRCACHE_MONITOR_HOOKS;
	rc = create(&cfg, &c);
	printf("dlopen()ed, monitor hooks: %s\n", rc ? strerror(-rc) : "started");
	CHECK_EQ(rc, -ENOTSUP);
	if (rc == 0)
		destroy(c);

	cfg.monitor = MRCACHE_MONITOR_UFFD;
	rc = create(&cfg, &c);
	printf("dlopen()ed, monitor uffd:  %s\n", rc ? strerror(-rc) : "started");
	if (rc == 0)
		CHECK_EQ(destroy(c), 0);
	return test_result();
}
