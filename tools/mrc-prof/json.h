/* SPDX-License-Identifier: MIT */
/*
 * json.h - a streaming JSON writer: objects and arrays nest, commas and
 * indentation are handled here, strings are escaped.
 */
#ifndef MP_JSON_H
#define MP_JSON_H

#include <stdint.h>
#include <stdio.h>

#define MP_JSON_DEPTH 16

struct mp_json {
	FILE *f;
	int depth;
	int count[MP_JSON_DEPTH];	/* members written at each level */
};

void mp_json_init(struct mp_json *j, FILE *f);
/* key is NULL inside arrays. */
void mp_json_open(struct mp_json *j, const char *key, char bracket);
void mp_json_close(struct mp_json *j, char bracket);
void mp_json_str(struct mp_json *j, const char *key, const char *v);
void mp_json_u64(struct mp_json *j, const char *key, uint64_t v);
void mp_json_num(struct mp_json *j, const char *key, double v);
void mp_json_bool(struct mp_json *j, const char *key, int v);

#endif
