/* SPDX-License-Identifier: MIT */
/*
 * spaces.h - per-process state kept in a growing array of structs whose
 * first member is `uint32_t tgid`.  Traces hold a few processes to a few
 * hundred, so a scan is enough.
 */
#ifndef MP_SPACES_H
#define MP_SPACES_H

#include <stddef.h>
#include <stdint.h>

/* The element of *v for tgid; a new zeroed one (with tgid set, *created
 * set to 1) if there is none.  NULL when out of memory. */
void *mp_space_get(void **v, size_t *n, size_t size, uint32_t tgid, int *created);
/* Remove element i (the last one takes its place). */
void mp_space_remove(void *v, size_t *n, size_t size, size_t i);

#endif
