/* SPDX-License-Identifier: MIT */
/*
 * The version has one source, the Makefile's VERSION: the header's
 * MRCACHE_VERSION and MRCACHE_VERSION_MAJOR/MINOR/PATCH and the library's
 * mrcache_version() all say what `make print-version` says.  The shared
 * library exports mrcache_version (and mrcache_set_log, the _sized
 * functions) at the version node MRCACHE_0.2, not at MRCACHE_0.1 (which
 * holds mrcache_create).
 * Control: with VERSION=9.9.9 on make's command line the same comparison
 * fails, so the version does come from the Makefile.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mrcache.h"
#include "testutil.h"

#ifndef MRC_SRCDIR
#error "the Makefile passes the source directory"
#endif

/* `make print-version` in the source tree, without the caller's make's
 * flags (a jobserver it cannot reach); 0 or -1. */
static int make_version(const char *args, char *buf, size_t n)
{
	char cmd[4096];
	FILE *p;
	size_t len;

	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	snprintf(cmd, sizeof(cmd),
		 "make -s --no-print-directory -C '%s' print-version %s 2>&1", MRC_SRCDIR, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	len = fread(buf, 1, n - 1, p);
	buf[len] = 0;
	if (pclose(p) != 0)
		return -1;
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = 0;
	return len ? 0 : -1;
}

static int same(const char *what, const char *got, const char *want)
{
	if (!strcmp(got, want))
		return 1;
	fprintf(stderr, "%s is \"%s\", the Makefile's VERSION \"%s\"\n", what, got, want);
	return 0;
}

/* The node each symbol is exported at, through the dynamic linker. */
static void check_symbol_versions(void)
{
	const char *build = getenv("MRC_TEST_BUILD");
	const char *(*fn)(void);
	char path[4096];
	void *h;

	if (!build) {
		printf("MRC_TEST_BUILD unset: symbol versions not checked\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/libmrcache.so.0", build);
	if (access(path, R_OK)) {
		printf("%s: no shared library here: symbol versions not checked\n", path);
		return;
	}
	/* A library that is there must load (it once did not: tests/test-dlopen.c). */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s: %s\n", path, dlerror());
		CHECK(h != NULL);
		return;
	}
	fn = (const char *(*)(void))dlvsym(h, "mrcache_version", "MRCACHE_0.2");
	CHECK(fn != NULL);
	if (fn)
		CHECK(same("the shared library's mrcache_version()", fn(), MRCACHE_VERSION));
	CHECK(dlvsym(h, "mrcache_version", "MRCACHE_0.1") == NULL);
	CHECK(dlvsym(h, "mrcache_set_log", "MRCACHE_0.2") != NULL);
	CHECK(dlvsym(h, "mrcache_create", "MRCACHE_0.1") != NULL);
	/* What made the structs growable (docs/api.md) came after 0.1.0. */
	CHECK(dlvsym(h, "mrcache_create_sized", "MRCACHE_0.2") != NULL);
	CHECK(dlvsym(h, "mrcache_stats_get_sized", "MRCACHE_0.2") != NULL);
	CHECK(dlvsym(h, "mrcache_create_sized", "MRCACHE_0.1") == NULL);
	dlclose(h);
}

int main(void)
{
	char want[64], parts[64], other[64];

	if (access(MRC_SRCDIR "/Makefile", R_OK) || system("command -v make >/dev/null"))
		SKIP("no make, or no %s/Makefile here", MRC_SRCDIR);
	if (make_version("", want, sizeof(want))) {
		fprintf(stderr, "`make print-version` in %s failed: %s\n", MRC_SRCDIR, want);
		return 1;
	}
	snprintf(parts, sizeof(parts), "%d.%d.%d", MRCACHE_VERSION_MAJOR,
		 MRCACHE_VERSION_MINOR, MRCACHE_VERSION_PATCH);
	CHECK(same("MRCACHE_VERSION", MRCACHE_VERSION, want));
	CHECK(same("MRCACHE_VERSION_MAJOR.MINOR.PATCH", parts, want));
	CHECK(same("mrcache_version()", mrcache_version(), want));
	CHECK_EQ(make_version("VERSION=9.9.9", other, sizeof(other)), 0);
	CHECK(strcmp(other, "9.9.9") == 0);
	CHECK(strcmp(MRCACHE_VERSION, other) != 0);
	check_symbol_versions();
	return test_result();
}
