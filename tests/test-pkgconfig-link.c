/* SPDX-License-Identifier: MIT */
/*
 * A program outside the tree links with what `pkg-config mrcache` says,
 * against the build directory's mrcache.pc (its libdir and includedir
 * pointed at the build and the source tree):
 *  - static: `pkg-config --static --cflags --libs mrcache` and -static
 *    link, and the program runs (it used to fail: Libs.private named
 *    -libverbs -lbpf without their own dependencies);
 *  - shared, under -Wl,--as-needed: links, needs libmrcache.so.0, runs.
 * Control: the static link without --static misses liburing (the private
 * dependency), so the check sees a link that fails.
 * Needs MRC_TEST_BUILD (tests/run.sh), cc, pkg-config and liburing.a.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testutil.h"

static const char prog[] =
	"#include <errno.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <mrcache.h>\n"
	"static int reg(void *arg, void *addr, size_t len, unsigned access,\n"
	"               void **handle, uint64_t *key)\n"
	"{ *handle = addr; *key = 1; return 0; }\n"
	"static int dereg(void *arg, void *handle) { return 0; }\n"
	"static const struct mrcache_backend_ops ops = { reg, dereg };\n"
	"int main(void)\n"
	"{\n"
	"	struct mrcache_config cfg;\n"
	"	struct mrcache *c;\n"
	"	struct mrcache_region *r;\n"
	"	char *buf = aligned_alloc(4096, 65536);\n"
	"	mrcache_config_init(&cfg);\n"
	"	cfg.backend = MRCACHE_BACKEND_CALLBACKS;\n"
	"	cfg.ops = &ops;\n"
	"	cfg.monitor = MRCACHE_MONITOR_NONE;\n"
	"	if (!buf || mrcache_create(&cfg, &c) ||\n"
	"	    mrcache_get(c, buf, 65536, MRCACHE_ACCESS_LOCAL_WRITE, &r) ||\n"
	"	    mrcache_put(c, r) || mrcache_destroy(c))\n"
	"		return 1;\n"
	"	printf(\"mrcache %s works\\n\", mrcache_version());\n"
	"	return 0;\n"
	"}\n";

static char dir[] = "/tmp/mrc-pkgconfig-XXXXXX";
static char pc[8192];

/* Run cmd with stderr merged; its exit status, or -1. */
static int sh(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int status;

	if (!p)
		return -1;
	while (n + 1 < len && fgets(out + n, (int)(len - n), p))
		n += strlen(out + n);
	out[n] = 0;
	status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int build(const char *name, const char *pc_args, const char *ld, char *out, size_t len)
{
	char cmd[16384];

	snprintf(cmd, sizeof(cmd), "cd %s && cc -o %s prog.c %s $(%s %s) 2>&1", dir, name, ld,
		 pc, pc_args);
	return sh(cmd, out, len);
}

static int run(const char *name, char *out, size_t len)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "%s/%s 2>&1", dir, name);
	return sh(cmd, out, len);
}

int main(void)
{
	const char *b = getenv("MRC_TEST_BUILD");
	char out[16384], path[4200], *why;
	FILE *f;

	if (!b)
		SKIP("MRC_TEST_BUILD is not set (run through tests/run.sh)");
#ifdef TEST_SANITIZED
	/* .ci/run builds only tests and tools with SAN=: no .pc, no .so. */
	SKIP("a sanitizer build has no pkg-config file or shared library to link");
#endif
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sh("command -v cc && command -v pkg-config", out, sizeof(out)))
		SKIP("no cc or pkg-config");
	if (sh("pkg-config --variable=libdir liburing", out, sizeof(out)) == 0) {
		out[strcspn(out, "\n")] = 0;
		snprintf(path, sizeof(path), "%.4000s/liburing.a", out);
		if (access(path, R_OK))
			SKIP("no %s for a static link", path);
	}
	snprintf(pc, sizeof(pc), "PKG_CONFIG_PATH=%s pkg-config --define-variable=libdir=%s "
		 "--define-variable=includedir=%s/include", b, b, MRC_SRCDIR);
	if (!mkdtemp(dir))
		SKIP("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	f = fopen(path, "w");
	CHECK(f && fputs(prog, f) >= 0 && fclose(f) == 0);

	CHECK(build("bad", "--cflags --libs mrcache", "-static", out, sizeof(out)) != 0);
	why = strstr(out, "io_uring");
	CHECK(why != NULL);
	printf("control: -static without --static fails (%.*s)\n",
	       why ? (int)strcspn(why, "\n") : 0, why ? why : "");

	CHECK_EQ(build("static", "--static --cflags --libs mrcache", "-static", out, sizeof(out)), 0);
	/* glibc warns that dlopen in a static program needs its shared
	 * libraries at run time: only the verbs backend and bpf use it. */
	printf("static link:\n%s", out);
	CHECK_EQ(run("static", out, sizeof(out)), 0);
	printf("static program: %s", out);

	snprintf(path, sizeof(path), "-Wl,--as-needed -Wl,-rpath,%.4000s", b);
	CHECK_EQ(build("shared", "--cflags --libs mrcache", path, out, sizeof(out)), 0);
	CHECK_EQ(run("shared", out, sizeof(out)), 0);
	printf("shared program (--as-needed): %s", out);
	snprintf(path, sizeof(path), "readelf -d %s/shared", dir);
	CHECK_EQ(sh(path, out, sizeof(out)), 0);
	CHECK(strstr(out, "[libmrcache.so.0]") != NULL);

	snprintf(path, sizeof(path), "rm -rf %s", dir);
	sh(path, out, sizeof(out));
	return test_result();
}
