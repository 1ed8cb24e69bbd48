/* SPDX-License-Identifier: MIT */
/*
 * Every public function in include/mrcache.h has a man(3) page (its own,
 * or a .so link to the page whose NAME lists it), every tool
 * (tools/NAME/main.c) a man(1) page, and mrcache(7) exists; every page
 * that is not a link formats without a warning (groff -ww) and has NAME,
 * SYNOPSIS and DESCRIPTION, and the man(3) pages RETURN VALUE and ERRORS.
 * Controls: a made-up function name is reported missing, and groff does
 * warn about a page with an unknown macro.
 */
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

#ifndef MRC_SRCDIR
#error "mk/api.mk passes the source directory"
#endif
#define MAN MRC_SRCDIR "/man/"
#define MAXFN 64

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	if (buf)
		buf[n] = 0;
	fclose(f);
	return buf;
}

/* Declarations start in column 0 (bodies are indented, comments start
 * with '/' or ' '): the first "mrcache_name(" on such a line. */
static int header_functions(char names[][64])
{
	char *text = slurp(MRC_SRCDIR "/include/mrcache.h"), *line, *save = NULL;
	int n = 0;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *p = strstr(line, "mrcache_");
		size_t len;

		if (strchr("/ \t#}*", line[0]) || !p || strstr(line, "typedef"))
			continue;
		len = strspn(p, "abcdefghijklmnopqrstuvwxyz_");
		if (p[len] == '(' && n < MAXFN && len < 64)
			snprintf(names[n++], 64, "%.*s", (int)len, p);
	}
	free(text);
	return n;
}

/* The page documenting `name` in `section`, following one .so link;
 * NULL (and a message) when there is none. */
static char *page_for(const char *name, int section)
{
	char path[4096], *text, *nl;

	snprintf(path, sizeof(path), MAN "%s.%d", name, section);
	text = slurp(path);
	if (text && !strncmp(text, ".so ", 4)) {
		nl = strchr(text, '\n');
		if (nl)
			*nl = 0;
		snprintf(path, sizeof(path), MAN "%s", basename(text + 4));
		free(text);
		text = slurp(path);
	}
	if (!text)
		fprintf(stderr, "no man page for %s(%d): %s\n", name, section, path);
	return text;
}

/* The NAME section's line lists `name` before the "\-". */
static int names(const char *text, const char *name)
{
	const char *p = strstr(text, ".SH NAME\n"), *end;
	size_t len = strlen(name);

	if (!p)
		return 0;
	p += strlen(".SH NAME\n");
	end = strstr(p, "\\-");
	for (; p && end && (p = strstr(p, name)) && p < end; p += len)
		if ((p[len] == ',' || p[len] == ' ') && (p[-1] == '\n' || p[-1] == ' '))
			return 1;
	return 0;
}

static int documented(const char *name, int section)
{
	char *text = page_for(name, section);
	int ok = text && names(text, name);

	if (text && !ok)
		fprintf(stderr, "%s(%d)'s page does not name it under NAME\n", name, section);
	free(text);
	return ok;
}

/* groff's warnings about a page; 0 when there are none. */
static int groff_warnings(const char *path)
{
	char cmd[4200], out[4096];
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd), "groff -ww -z -man '%s' 2>&1", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	pclose(p);
	if (n)
		fprintf(stderr, "%s", out);
	return n != 0;
}

static void check_page(const char *path)
{
	static const char *const all[] = { ".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n" };
	static const char *const lib[] = { ".SH RETURN VALUE\n", ".SH ERRORS\n" };
	char *text = slurp(path);
	size_t len = strlen(path);

	if (!text || !strncmp(text, ".so ", 4)) {
		free(text);
		return;
	}
	CHECK_EQ(groff_warnings(path), 0);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strstr(text, all[i])) {
			fprintf(stderr, "%s: no %s", path, all[i]);
			CHECK(0);
		}
	for (size_t i = 0; path[len - 1] == '3' && i < sizeof(lib) / sizeof(lib[0]); i++)
		if (!strstr(text, lib[i])) {
			fprintf(stderr, "%s: no %s", path, lib[i]);
			CHECK(0);
		}
	free(text);
}

static void check_tools(void)
{
	glob_t g;
	int n = 0;

	CHECK_EQ(glob(MRC_SRCDIR "/tools/*/main.c", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char *dir = strdup(g.gl_pathv[i]);

		*strrchr(dir, '/') = 0;
		CHECK(documented(basename(dir), 1));
		n++;
		free(dir);
	}
	globfree(&g);
	CHECK(n >= 5);
}

static void check_controls(void)
{
	char path[] = "/tmp/test-man-pages-XXXXXX";
	int fd = mkstemp(path);
	static const char bad[] = ".TH X 3\n.SH NAME\nx \\- y\n.XX not a macro\n";

	CHECK(!documented("mrcache_no_such_function", 3));
	CHECK(fd >= 0 && write(fd, bad, sizeof(bad) - 1) == (ssize_t)(sizeof(bad) - 1));
	CHECK_EQ(groff_warnings(path), 1);
	close(fd);
	unlink(path);
}

int main(void)
{
	char fn[MAXFN][64];
	int n;
	glob_t g;

	if (system("command -v groff >/dev/null"))
		SKIP("no groff");
	n = header_functions(fn);
	if (n < 0)
		SKIP("no %s/include/mrcache.h", MRC_SRCDIR);
	CHECK(n >= 25);
	for (int i = 0; i < n; i++)
		CHECK(documented(fn[i], 3));
	check_tools();
	CHECK(documented("mrcache", 7));
	CHECK_EQ(glob(MAN "*.[137]", 0, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++)
		check_page(g.gl_pathv[i]);
	globfree(&g);
	fprintf(stderr, "controls (two messages expected):\n");
	check_controls();
	return test_result();
}
