/* SPDX-License-Identifier: MIT */
/*
 * libmrcache.so does not link libibverbs (and so libnl) or libbpf (and so
 * libelf and zlib): an io_uring-only program must not load them.  The
 * verbs backend and the bpf monitor load them when used (lib/common/dl.h).
 *  - `readelf -d`: no such DT_NEEDED.  Control: liburing's is found, so
 *    the parsing sees NEEDED entries.
 *  - `readelf -p .note.dlopen`: the optional libraries are declared for
 *    packagers.
 *  - a cache with the callbacks backend and monitor none maps none of
 *    them.  Control: where the bpf monitor starts, libbpf.so.1 is then
 *    mapped, so the check sees a loaded library.
 * Needs MRC_TEST_BUILD (set by tests/run.sh) and readelf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testutil.h"

static const char *const optional[] = {
	"libibverbs", "libnl", "libbpf", "libelf", "libz.",
};

/* The output of cmd, whole, into out. */
static int run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;

	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, (int)(len - n), p))
		n += strlen(out + n);
	out[n] = 0;
	return pclose(p) == 0 ? 0 : -1;
}

static int has_optional(const char *text, const char *prefix)
{
	for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
		const char *at = text;

		while ((at = strstr(at, optional[i]))) {
			const char *line = at;

			while (line > text && line[-1] != '\n')
				line--;
			if (strstr(line, prefix) && strstr(line, prefix) < at) {
				fprintf(stderr, "found: %.*s\n", (int)strcspn(line, "\n"), line);
				return 1;
			}
			at++;
		}
	}
	return 0;
}

static void check_needed(const char *so)
{
	char cmd[4200], out[16384];

	snprintf(cmd, sizeof(cmd), "readelf -d '%s'", so);
	if (run(cmd, out, sizeof(out)))
		SKIP("readelf -d %s failed (binutils?)", so);
	CHECK(strstr(out, "(NEEDED)") && strstr(out, "[liburing.so."));
	CHECK(!has_optional(out, "(NEEDED)"));
	printf("readelf -d: liburing NEEDED (control), no optional library NEEDED\n");

	snprintf(cmd, sizeof(cmd), "readelf -p .note.dlopen '%s'", so);
	CHECK_EQ(run(cmd, out, sizeof(out)), 0);
#ifdef MRC_HAVE_BPF
	CHECK(strstr(out, "\"soname\":[\"libbpf.so.1\"]") != NULL);
#endif
#ifdef MRC_HAVE_VERBS
	CHECK(strstr(out, "\"soname\":[\"libibverbs.so.1\"]") != NULL);
#endif
	printf(".note.dlopen:\n%s", out);
}

/* 1 if /proc/self/maps names one of the optional libraries. */
static int maps_optional(void)
{
	static char out[1 << 20];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	fclose(f);
	return has_optional(out, "/");
}

static int create_destroy(enum mrcache_monitor_kind kind)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, kind);
	rc = mrcache_create(&cfg, &c);
	if (rc == 0)
		mrcache_destroy(c);
	return rc;
}

int main(void)
{
	const char *build = getenv("MRC_TEST_BUILD");
	char so[4096];

	if (!build)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsetenv("MRCACHE_MONITOR");	/* the monitors are chosen here */
	snprintf(so, sizeof(so), "%s/libmrcache.so.0", build);
	check_needed(so);

	CHECK_EQ(create_destroy(MRCACHE_MONITOR_NONE), 0);
	CHECK_EQ(maps_optional(), 0);
	printf("callbacks backend, monitor none: no optional library mapped\n");
	if (create_destroy(MRCACHE_MONITOR_BPF) == 0) {
		CHECK_EQ(maps_optional(), 1);
		printf("control: after a bpf cache, libbpf is mapped\n");
	} else {
		printf("control not run: the bpf monitor does not start here\n");
	}
	return test_result();
}
