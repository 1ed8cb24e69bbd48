/* SPDX-License-Identifier: MIT */
/*
 * libmrcache.so.0 loaded with dlopen() after start-up, as a libfabric
 * provider, a Python extension or a plugin loads it: the loader must find
 * room for its thread-local storage, and the library must work.
 *
 * A library whose TLS uses the initial-exec model (the hit path's) needs a
 * static TLS block; after start-up glibc has only a small surplus for those
 * (about 1.6 KiB, shared by every library loaded so).  libmrcache once
 * carried a 4 KiB profiling ring in TLS and dlopen() failed with "cannot
 * allocate memory in static TLS block".  This program links the static
 * archive, so the shared object's TLS comes from that surplus.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "mrcache.h"
#include "testutil.h"

int main(void)
{
	const char *build = getenv("MRC_TEST_BUILD");
	char path[PATH_MAX];
	const char *(*version)(void);
	void *h;

#ifdef TEST_SANITIZED
	SKIP("a sanitizer build has no shared library");
#endif
	if (!build)
		SKIP("MRC_TEST_BUILD unset (tests/run.sh sets it)");
	snprintf(path, sizeof(path), "%s/libmrcache.so.0", build);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
		return 1;
	}
	version = (const char *(*)(void))dlsym(h, "mrcache_version");
	CHECK(version != NULL);
	if (version)
		CHECK(strcmp(version(), MRCACHE_VERSION) == 0);
	CHECK(dlclose(h) == 0);
	return test_result();
}
