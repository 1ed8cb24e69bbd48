/* SPDX-License-Identifier: MIT */
/*
 * Every MRCACHE_* variable is documented: the names the sources of lib/,
 * hooks/ and tools/ quote are all in README.md's configuration table, and
 * the list of known variables the library prints in its unknown-variable
 * warning is exactly that table, exactly the ENVIRONMENT section of
 * man/mrcache.7 and exactly what mrcache_env_describe() lists.  Controls:
 * the scan finds MRCACHE_BPF_VARIANT (quoted only in
 * lib/monitor/bpf/load.c) and neither the table nor the man page holds a
 * made-up name.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

#ifndef MRC_SRCDIR
#error "the Makefile passes the source directory"
#endif

#define MAXNAMES 64
#define NAMELEN 64

struct names {
	int n;
	char v[MAXNAMES][NAMELEN];
};

static int has(const struct names *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return 1;
	return 0;
}

/* A bare "MRCACHE_" (the prefix itself) is no name. */
static void add(struct names *s, const char *name, size_t len)
{
	char copy[NAMELEN];

	if (len <= strlen("MRCACHE_") || len >= NAMELEN)
		return;
	memcpy(copy, name, len);
	copy[len] = 0;
	if (!has(s, copy) && s->n < MAXNAMES)
		memcpy(s->v[s->n++], copy, len + 1);
}

static size_t name_len(const char *p)
{
	return strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			cap = 2 * cap + 8192;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* Names in the "## Configuration" section's table rows: | `NAME...` | */
static char *readme_table(struct names *s)
{
	char *text = slurp(MRC_SRCDIR "/README.md"), *sec, *end, *p;

	if (!text)
		return NULL;
	sec = strstr(text, "\n## Configuration\n");
	if (!sec)
		return text;
	end = strstr(sec + 1, "\n## ");
	if (end)
		*end = 0;
	for (p = sec; (p = strstr(p, "\n| `MRCACHE_")); p++)
		add(s, p + 4, name_len(p + 4));
	memmove(text, sec, strlen(sec) + 1);
	return text;
}

/* Names right after a double quote: string literals. */
static void scan_sources(const char *pattern, struct names *s)
{
	glob_t g;

	if (glob(pattern, 0, NULL, &g))
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *text = slurp(g.gl_pathv[i]);

		for (char *p = text; p && (p = strstr(p, "\"MRCACHE_")); p++)
			add(s, p + 1, name_len(p + 1));
		free(text);
	}
	globfree(&g);
}

static int warn(void *arg)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	return mrcache_create(&cfg, &c) || mrcache_destroy(c);
}

/* The library's own list: the end of its unknown-variable warning. */
static void library_list(struct names *s)
{
	static const char *const vars[] = { "MRCACHE_TEST_NO_SUCH_VARIABLE=1", NULL };
	static struct test_child res;
	const char *p;

	CHECK_EQ(test_child_run(vars, -1, warn, NULL, &res), 0);
	p = strstr(res.err, "MRCACHE_TEST_NO_SUCH_VARIABLE");
	p = p ? strchr(p, ';') : NULL;
	if (!p) {
		fprintf(stderr, "no unknown-variable warning: %s\n", res.err);
		CHECK(0);
		return;
	}
	for (; (p = strstr(p, "MRCACHE_")); p += 8)
		add(s, p, name_len(p));
}

/* Names the man page's ENVIRONMENT section describes: ".B MRCACHE_..." */
static void man_environment(struct names *s)
{
	char *text = slurp(MRC_SRCDIR "/man/mrcache.7"), *sec, *end, *p;

	sec = text ? strstr(text, "\n.SH ENVIRONMENT\n") : NULL;
	if (!sec) {
		fprintf(stderr, "man/mrcache.7 has no ENVIRONMENT section\n");
		CHECK(0);
		free(text);
		return;
	}
	end = strstr(sec + 1, "\n.SH ");
	if (end)
		*end = 0;
	for (p = sec; (p = strstr(p, "\n.TP\n.B MRCACHE_")); p++)
		add(s, p + 8, name_len(p + 8));
	free(text);
}

static void same_names(const char *what, const struct names *a, const char *other,
		       const struct names *b)
{
	for (int i = 0; i < a->n; i++) {
		if (!has(b, a->v[i])) {
			fprintf(stderr, "%s has %s; %s does not\n", what, a->v[i], other);
			CHECK(0);
		}
	}
}

int main(void)
{
	struct names man = { 0 }, described = { 0 };
	const char *name;
	struct names table = { 0 }, quoted = { 0 }, known = { 0 };
	char *section = readme_table(&table);

	if (!section)
		SKIP("no %s/README.md here", MRC_SRCDIR);
	scan_sources(MRC_SRCDIR "/lib/*/*.c", &quoted);
	scan_sources(MRC_SRCDIR "/lib/*/*/*.c", &quoted);
	scan_sources(MRC_SRCDIR "/hooks/*.c", &quoted);
	scan_sources(MRC_SRCDIR "/tools/*/*.c", &quoted);
	library_list(&known);

	CHECK(table.n >= 5);
	CHECK(!has(&table, "MRCACHE_NO_SUCH_THING"));
	CHECK(has(&quoted, "MRCACHE_BPF_VARIANT"));
	for (int i = 0; i < quoted.n; i++) {
		if (!has(&table, quoted.v[i])) {
			fprintf(stderr, "%s is read but not in README.md's table\n", quoted.v[i]);
			CHECK(0);
		}
	}
	for (int i = 0; i < known.n; i++) {
		if (!has(&table, known.v[i])) {
			fprintf(stderr, "the library knows %s; README.md's table does not\n",
				known.v[i]);
			CHECK(0);
		}
	}
	for (int i = 0; i < table.n; i++) {
		if (!has(&known, table.v[i])) {
			fprintf(stderr, "README.md documents %s; the library does not know it\n",
				table.v[i]);
			CHECK(0);
		}
	}
	man_environment(&man);
	for (unsigned i = 0; mrcache_env_describe(i, &name, NULL, NULL) == 0; i++)
		add(&described, name, name_len(name));	/* a family such as
							   MRCACHE_<NAME>_<VAR> is no one name */
	CHECK(!has(&man, "MRCACHE_NO_SUCH_THING"));
	same_names("man/mrcache.7", &man, "the library's list", &known);
	same_names("the library's list", &known, "man/mrcache.7", &man);
	same_names("mrcache_env_describe()", &described, "the library's list", &known);
	same_names("the library's list", &known, "mrcache_env_describe()", &described);
	/* Units: say which K. */
	CHECK(strstr(section, "1024") != NULL);
	free(section);
	return test_result();
}
