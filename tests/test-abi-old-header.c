/* SPDX-License-Identifier: MIT */
/*
 * A program built against 0.1.0's header (tests/abi/mrcache-0.1.h, the
 * public header before the structs could grow) and linked against today's
 * shared library (mk/abi.mk), as an old binary would be: its calls of
 * mrcache_config_init, mrcache_create and mrcache_stats_get bind to
 * version MRCACHE_0.1, and a cache it creates, uses and reads the
 * counters of behaves as 0.1.0 documented.  The counters after
 * invalidations[] (evictions, regions, bytes, monitor) are where a layout
 * mismatch would show.
 * Controls: the same counters read through today's layout
 * (mrcache_stats_get_sized with the old struct's size) come out wrong, and
 * mrcache_config_init_sized given more than the old struct clears the
 * canary after it that the old entry point must leave alone.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "abi/mrcache-0.1.h"

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
		failures++;						\
	}								\
} while (0)

struct old_config_buf {
	struct mrcache_config cfg;
	unsigned char canary[64];
};

static unsigned live, invalidated;

static int reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
	       uint64_t *key)
{
	live++;
	*handle = addr;
	*key = (uint64_t)len;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	live--;
	return 0;
}

static void on_invalidate(void *arg, uintptr_t start, uintptr_t end, enum mrcache_cause cause)
{
	if (cause == MRCACHE_CAUSE_MANUAL)
		invalidated++;
}

static const struct mrcache_backend_ops ops = { reg, dereg };

static int canary_intact(const struct old_config_buf *b)
{
	for (size_t i = 0; i < sizeof(b->canary); i++)
		if (b->canary[i] != 0x5a)
			return 0;
	return 1;
}

/* The number of counters that differ from what the steps in main() make. */
static int wrong_counters(const struct mrcache_stats *s)
{
	int wrong = 0;

	wrong += s->hits != 1;
	wrong += s->misses != 4;
	wrong += s->registrations != 4;
	wrong += s->invalidations[MRCACHE_CAUSE_MANUAL] != 2;
	wrong += s->evictions != 1;
	wrong += s->regions != 1;
	wrong += s->bytes != 4096;
	wrong += s->monitor != MRCACHE_MONITOR_NONE;
	return wrong;
}

/* Every call binds to the node an 0.1.0 binary recorded. */
static void check_bindings(void)
{
	static const char *const names[] = {
		"mrcache_config_init", "mrcache_create", "mrcache_stats_get", "mrcache_get",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		void *dflt = dlsym(RTLD_DEFAULT, names[i]);

		CHECK(dflt != NULL);
		CHECK(dflt == dlvsym(RTLD_DEFAULT, names[i], "MRCACHE_0.1"));
	}
}

int main(void)
{
	static char buf[3 * 4096] __attribute__((aligned(4096)));
	int (*stats_get_sized)(struct mrcache *, struct mrcache_stats *, size_t);
	int (*config_init_sized)(struct mrcache_config *, size_t);
	struct old_config_buf b;
	struct mrcache_stats s;
	struct mrcache_region *r;
	struct mrcache *c;

	printf("header %s, library %s\n", MRCACHE_VERSION, mrcache_version());
	check_bindings();
	memset(&b, 0x5a, sizeof(b));
	mrcache_config_init(&b.cfg);
	CHECK(canary_intact(&b));
	CHECK(b.cfg.backend == MRCACHE_BACKEND_CALLBACKS && b.cfg.max_regions == 0);
	b.cfg.ops = &ops;
	b.cfg.monitor = MRCACHE_MONITOR_NONE;
	b.cfg.flags = MRCACHE_FLAG_NO_ENV;
	b.cfg.max_regions = 1;
	b.cfg.on_invalidate = on_invalidate;
	CHECK(mrcache_create(&b.cfg, &c) == 0);
	if (failures)
		return 1;

	CHECK(mrcache_get(c, buf, 4096, 0, &r) == 0);		/* miss */
	CHECK(mrcache_put(c, r) == 0);
	CHECK(mrcache_get(c, buf, 4096, 0, &r) == 0);		/* hit */
	CHECK(mrcache_put(c, r) == 0);
	CHECK(mrcache_invalidate(c, buf, 4096) == 1);
	CHECK(mrcache_get(c, buf + 4096, 4096, 0, &r) == 0);	/* miss */
	CHECK(mrcache_put(c, r) == 0);
	CHECK(mrcache_get(c, buf + 8192, 4096, 0, &r) == 0);	/* miss, evicts */
	CHECK(mrcache_put(c, r) == 0);
	CHECK(mrcache_invalidate(c, buf + 8192, 4096) == 1);
	CHECK(mrcache_get(c, buf + 8192, 4096, 0, &r) == 0);	/* miss */
	CHECK(mrcache_put(c, r) == 0);

	memset(&s, 0xff, sizeof(s));
	CHECK(mrcache_stats_get(c, &s) == 0);
	CHECK(wrong_counters(&s) == 0);
	CHECK(invalidated == 2);
	if (wrong_counters(&s))
		mrcache_stats_print(c, stderr);

	/* Controls, through today's entry points (not in the old header). */
	stats_get_sized = (int (*)(struct mrcache *, struct mrcache_stats *, size_t))
		dlvsym(RTLD_DEFAULT, "mrcache_stats_get_sized", "MRCACHE_0.2");
	config_init_sized = (int (*)(struct mrcache_config *, size_t))
		dlvsym(RTLD_DEFAULT, "mrcache_config_init_sized", "MRCACHE_0.2");
	CHECK(stats_get_sized && config_init_sized);
	if (stats_get_sized && config_init_sized) {
		memset(&s, 0, sizeof(s));
		CHECK(stats_get_sized(c, &s, sizeof(s)) == (int)sizeof(s));
		CHECK(wrong_counters(&s) > 0);
		memset(&b, 0x5a, sizeof(b));
		CHECK(config_init_sized(&b.cfg, sizeof(b)) == 0);
		CHECK(!canary_intact(&b));
	}

	CHECK(mrcache_destroy(c) == 0);
	CHECK(live == 0);
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
