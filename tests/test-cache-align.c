/* SPDX-License-Identifier: MIT */
/*
 * struct mrcache is declared 64-byte aligned (its first line is what every
 * hit reads, its thread blocks one line each): a cache must be allocated
 * at that alignment, not at calloc()'s 16 bytes (undefined behaviour, and
 * two threads' counters in one line).  Regression: 0.1's caches were
 * calloc'ed.
 */
#include <stdint.h>
#include <sys/mman.h>
#include "cache/cache.h"
#include "testbackend.h"
#include "testutil.h"

#define CACHES 12

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c[CACHES];
	void *pad[CACHES];

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	for (int i = 0; i < CACHES; i++) {
		/* Odd-sized allocations in between move malloc's next chunk. */
		pad[i] = malloc(16 + 16 * (size_t)i);
		CHECK_EQ(mrcache_create(&cfg, &c[i]), 0);
		CHECK_EQ((uintptr_t)c[i] % _Alignof(struct mrcache), 0);
		CHECK_EQ((uintptr_t)c[i]->threads % 64, 0);
		CHECK_EQ((uintptr_t)&c[i]->threads->block[1] % 64, 0);
	}
	CHECK(_Alignof(struct mrcache) >= 64);
	for (int i = 0; i < CACHES; i++) {
		CHECK_EQ(mrcache_destroy(c[i]), 0);
		free(pad[i]);
	}
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
