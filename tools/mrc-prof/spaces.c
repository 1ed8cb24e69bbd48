/* SPDX-License-Identifier: MIT */
/* spaces.c - the per-process arrays. */
#include <stdlib.h>
#include <string.h>
#include "spaces.h"

void *mp_space_get(void **v, size_t *n, size_t size, uint32_t tgid, int *created)
{
	char *base = *v;
	uint32_t id;

	if (created)
		*created = 0;
	for (size_t i = 0; i < *n; i++) {
		memcpy(&id, base + i * size, sizeof(id));
		if (id == tgid)
			return base + i * size;
	}
	base = realloc(*v, (*n + 1) * size);
	if (!base)
		return NULL;
	*v = base;
	base += (*n)++ * size;
	memset(base, 0, size);
	memcpy(base, &tgid, sizeof(tgid));
	if (created)
		*created = 1;
	return base;
}

void mp_space_remove(void *v, size_t *n, size_t size, size_t i)
{
	char *base = v;

	if (i + 1 < *n)
		memcpy(base + i * size, base + (*n - 1) * size, size);
	(*n)--;
}
