/* SPDX-License-Identifier: MIT */
/* json.c - the JSON writer. */
#include <inttypes.h>
#include <math.h>
#include "json.h"

void mp_json_init(struct mp_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->count[0] = 0;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void member(struct mp_json *j, const char *key)
{
	if (j->count[j->depth]++)
		fputc(',', j->f);
	if (j->depth)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	if (key) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

void mp_json_open(struct mp_json *j, const char *key, char bracket)
{
	member(j, key);
	fputc(bracket, j->f);
	if (j->depth < MP_JSON_DEPTH - 1)
		j->count[++j->depth] = 0;
}

void mp_json_close(struct mp_json *j, char bracket)
{
	int had = j->count[j->depth];

	if (j->depth)
		j->depth--;
	if (had)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(bracket, j->f);
	if (!j->depth)
		fputc('\n', j->f);
}

void mp_json_str(struct mp_json *j, const char *key, const char *v)
{
	member(j, key);
	put_string(j->f, v);
}

void mp_json_u64(struct mp_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

void mp_json_num(struct mp_json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void mp_json_bool(struct mp_json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}
