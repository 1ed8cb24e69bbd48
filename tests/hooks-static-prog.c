/* SPDX-License-Identifier: MIT */
/*
 * A program for test-hooks-static, linked fully static (mk/hooks.mk) with
 * libmrcache-hooks' interposers: munmap() reaches them, free() stays
 * glibc's (hooks/malloc.c defines it weak), and glibc's free() unmaps
 * big blocks through its internal __munmap.  It creates a cache with the
 * hooks monitor and prints "create: ERROR" or, when the monitor starts,
 * what that costs: ROUNDS times it mallocs a block above the mmap
 * threshold (glibc gives it its own mapping), gets it, frees it, mallocs
 * the same size again (usually at the same address) and gets that; a get
 * that makes no registration hits the freed block's ("stale N of M").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mrcache.h"

#define ROUNDS 100
#define LEN (1ul << 20)

static unsigned regs;

static int reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
	       uint64_t *key)
{
	regs++;
	*handle = addr;
	*key = 0;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	return 0;
}

static int get_put(struct mrcache *c, void *p)
{
	struct mrcache_region *r;

	memset(p, 1, LEN);
	if (mrcache_get(c, p, LEN, 0, &r))
		return -1;
	return mrcache_put(c, r);
}

int main(void)
{
	static const struct mrcache_backend_ops ops = { reg, dereg };
	struct mrcache_config cfg;
	struct mrcache *c;
	unsigned stale = 0, same = 0;
	int rc;

	mrcache_config_init(&cfg);
	cfg.ops = &ops;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	cfg.monitor = MRCACHE_MONITOR_HOOKS;
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		printf("create: %s\n", strerror(-rc));
		return 1;
	}
	printf("started\n");
	for (int i = 0; i < ROUNDS; i++) {
		void *a = malloc(LEN), *b;
		unsigned before;

		if (!a || get_put(c, a))
			return 2;
		free(a);
		b = malloc(LEN);
		before = regs;
		if (!b || get_put(c, b))
			return 2;
		same += b == a;
		stale += b == a && regs == before;
		free(b);
	}
	printf("stale %u of %u (same address %u times)\n", stale, ROUNDS, same);
	mrcache_destroy(c);
	return 0;
}
