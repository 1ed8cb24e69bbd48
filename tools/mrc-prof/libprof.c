/* SPDX-License-Identifier: MIT */
/* libprof.c - collect libmrcache's MRCACHE_PROF dumps. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libprof.h"
#include "common/prof.h"

_Static_assert(MP_LIB_KINDS == MRC_PROF_KINDS, "libmrcache profile kinds");
_Static_assert(MP_LIB_BUCKETS == MRC_PROF_BUCKETS, "libmrcache profile buckets");

const char *mp_libprof_kind_name(int kind)
{
	return mrc_prof_kind_name((enum mrc_prof_kind)kind);
}

int mp_libprof_disjoint(int kind)
{
	return kind != MRC_PROF_MISS && kind != MRC_PROF_INVALIDATE;
}

int mp_libprof_prefix(char *buf, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s/mrc-prof.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -errno;
	if ((size_t)snprintf(buf, len, "%s/lib", dir) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int parse_kind(const char *text, const char *name, uint64_t *total, uint64_t *hist)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(text, key);
	if (!p || !(p = strstr(p, "\"total_ns\":")) ||
	    sscanf(p + 11, "%" SCNu64, total) != 1 || !(p = strstr(p, "\"log2_ns\":")) ||
	    !(p = strchr(p, '[')))
		return -EINVAL;
	p++;
	for (int b = 0; b < MP_LIB_BUCKETS; b++) {
		char *end;

		hist[b] = strtoull(p, &end, 10);
		if (end == p)
			return -EINVAL;
		p = end;
		while (*p == ' ' || *p == ',')
			p++;
	}
	return *p == ']' ? 0 : -EINVAL;
}

int mp_libprof_parse(const char *text, struct mp_libprof *lib)
{
	uint64_t total[MP_LIB_KINDS], hist[MP_LIB_KINDS][MP_LIB_BUCKETS];

	if (!strstr(text, "\"kinds\""))
		return -EINVAL;
	for (int k = 0; k < MP_LIB_KINDS; k++) {
		if (!parse_kind(text, mp_libprof_kind_name(k), &total[k], hist[k]))
			continue;
		/* A dump from a library without the derived kinds. */
		if (k < MRC_PROF_MISS_OWN)
			return -EINVAL;
		total[k] = 0;
		memset(hist[k], 0, sizeof(hist[k]));
	}
	for (int k = 0; k < MP_LIB_KINDS; k++) {
		lib->total_ns[k] += total[k];
		for (int b = 0; b < MP_LIB_BUCKETS; b++)
			lib->hist[k][b] += hist[k][b];
	}
	lib->dumps++;
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);

			if (!nb)
				break;
			buf = nb;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);

		n += got;
		if (!got)
			break;
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

int mp_libprof_collect(const char *prefix, struct mp_trace *t)
{
	char dir[4096], path[8192];
	const char *base;
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s", prefix);
	base = strrchr(prefix, '/');
	if (!base)
		return 0;
	dir[base - prefix] = 0;
	base++;
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char *text;

		if (strncmp(de->d_name, base, strlen(base)) || de->d_name[strlen(base)] != '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = slurp(path);
		if (text && mp_libprof_parse(text, &t->lib) == 0)
			n++;
		else
			fprintf(stderr, "mrc-prof: ignoring unreadable profile %s\n", path);
		free(text);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
	return n;
}
