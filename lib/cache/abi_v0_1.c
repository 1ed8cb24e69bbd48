/* SPDX-License-Identifier: MIT */
/*
 * abi_v0_1.c - 0.1.0's entry points, for programs built against its header.
 *
 * Those programs call mrcache_config_init(), mrcache_create() and
 * mrcache_stats_get() as functions, with no size: the header now makes
 * them inline calls of the _sized functions, and the library keeps the old
 * symbols as the default version MRCACHE_0.1.  0.1.0's struct
 * mrcache_config is today's first MRC_CONFIG_SIZE_VER0 bytes; its struct
 * mrcache_stats had invalidations[7] where today's has room for
 * MRCACHE_CAUSE_MAX causes, so its counters are copied one by one.
 * tests/test-abi-old-header.c runs a program built against 0.1.0's header.
 */
#include <errno.h>
#include "cache/cache.h"

struct stats_v0_1 {
	uint64_t hits, subrange_hits, misses;
	uint64_t registrations, registration_failures, deregistrations;
	uint64_t invalidations[7];
	uint64_t evictions, uncached, merges, retries, regions, bytes;
	uint64_t register_ns, deregister_ns;
	enum mrcache_monitor_kind monitor;
};

void mrc_config_init_v0_1(struct mrcache_config *cfg);
int mrc_create_v0_1(const struct mrcache_config *cfg, struct mrcache **out);
int mrc_stats_get_v0_1(struct mrcache *c, struct stats_v0_1 *old);

__asm__(".symver mrc_config_init_v0_1, mrcache_config_init@@MRCACHE_0.1");
__asm__(".symver mrc_create_v0_1, mrcache_create@@MRCACHE_0.1");
__asm__(".symver mrc_stats_get_v0_1, mrcache_stats_get@@MRCACHE_0.1");

void mrc_config_init_v0_1(struct mrcache_config *cfg)
{
	mrcache_config_init_sized(cfg, MRC_CONFIG_SIZE_VER0);
}

int mrc_create_v0_1(const struct mrcache_config *cfg, struct mrcache **out)
{
	return mrcache_create_sized(cfg, MRC_CONFIG_SIZE_VER0, out);
}

int mrc_stats_get_v0_1(struct mrcache *c, struct stats_v0_1 *old)
{
	struct mrcache_stats s;
	int rc = old ? mrcache_stats_get(c, &s) : -EINVAL;

	if (rc)
		return rc;
	old->hits = s.hits;
	old->subrange_hits = s.subrange_hits;
	old->misses = s.misses;
	old->registrations = s.registrations;
	old->registration_failures = s.registration_failures;
	old->deregistrations = s.deregistrations;
	for (int i = 0; i < 7; i++)
		old->invalidations[i] = s.invalidations[i];
	old->evictions = s.evictions;
	old->uncached = s.uncached;
	old->merges = s.merges;
	old->retries = s.retries;
	old->regions = s.regions;
	old->bytes = s.bytes;
	old->register_ns = s.register_ns;
	old->deregister_ns = s.deregister_ns;
	old->monitor = s.monitor;
	return 0;
}
