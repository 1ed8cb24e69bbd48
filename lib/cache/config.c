/* SPDX-License-Identifier: MIT */
/*
 * config.c - struct mrcache_config across the ABI, defaults, checks, and
 * the MRCACHE_* environment variables.
 *
 * The struct travels with the size its program was compiled with
 * (docs/api.md): fields are only appended, a smaller struct reads as if
 * the missing fields were 0, and a larger one is accepted only when the
 * bytes this library does not know are 0 (copy_struct_from_user()'s rule).
 *
 * Precedence: an environment variable overrides the program's config, so
 * an administrator can change the monitor or the limits without rebuilding;
 * a program that must not be overridden sets MRCACHE_FLAG_NO_ENV.  How
 * the values read: lib/common/env.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "cache/cache.h"
#include "common/env.h"

int mrcache_config_init_sized(struct mrcache_config *cfg, size_t size)
{
	if (!cfg || size < MRC_CONFIG_SIZE_VER0)
		return -EINVAL;
	memset(cfg, 0, size);
	cfg->backend = MRCACHE_BACKEND_CALLBACKS;
	cfg->monitor = MRCACHE_MONITOR_AUTO;
	return 0;
}

/* The caller's struct, of `size` bytes, as this library's. */
static int config_copy_in(struct mrcache_config *to, const struct mrcache_config *from,
			  size_t size)
{
	const unsigned char *tail = (const unsigned char *)from;

	if (!from || size < MRC_CONFIG_SIZE_VER0)
		return -EINVAL;
	for (size_t i = sizeof(*to); i < size; i++)
		if (tail[i])
			return -E2BIG;
	memset(to, 0, sizeof(*to));
	memcpy(to, from, size < sizeof(*to) ? size : sizeof(*to));
	return 0;
}

int mrcache_create_sized(const struct mrcache_config *cfg, size_t size,
			 struct mrcache **out)
{
	struct mrcache_config full;
	int rc = config_copy_in(&full, cfg, size);

	return rc ? rc : mrc_cache_create(&full, out);
}

int mrcache_config_get_sized(struct mrcache *c, struct mrcache_config *cfg, size_t size)
{
	struct mrcache_config now;
	size_t n = size < sizeof(now) ? size : sizeof(now);

	if (!c || !cfg)
		return -EINVAL;
	now = c->cfg;
	now.flags &= MRCACHE_FLAG_ALL;
	now.monitor = c->monitor->ops->kind;
	memcpy(cfg, &now, n);
	memset((char *)cfg + n, 0, size - n);
	return (int)n;
}

/* MRCACHE_BPF_VARIANT is read where the programs load
 * (monitor/bpf/load.c), which cannot fail a create: checked here. */
static int check_bpf_variant(void)
{
	const char *v = getenv("MRCACHE_BPF_VARIANT");

	if (!v || !strcmp(v, "zap") || !strcmp(v, "syscall"))
		return 0;
	mrc_log(0, "MRCACHE_BPF_VARIANT=\"%s\" is not one of zap, syscall", v);
	return -EINVAL;
}

/* MRCACHE_LOG_LEVEL and MRCACHE_DEBUG are read by lib/common/log.c, which cannot
 * fail a create either. */
static int check_log_env(void)
{
	const char *v = getenv("MRCACHE_LOG_LEVEL");
	int level, rc = 0;

	if (v && mrc_parse_log_level(v, &level)) {
		mrc_log(0, "MRCACHE_LOG_LEVEL=\"%s\" is not a level (0 or error, 1 or debug, "
			"2 or trace)", v);
		rc = -EINVAL;
	}
	if (mrc_env_bool("MRCACHE_DEBUG", &level)) {
		mrc_log(0, "MRCACHE_DEBUG=1 means MRCACHE_LOG_LEVEL=1; libbpf's messages "
			"need MRCACHE_LOG_LEVEL=2");
		rc = -EINVAL;
	}
	return rc;
}

/* Every variable is checked, so that one run names every bad value. */
static int apply_env(struct mrcache_config *cfg)
{
	const char *v = getenv("MRCACHE_MONITOR");
	int stats = 0, rc = 0;

	mrc_env_report();
	if (v && mrcache_monitor_parse(v, &cfg->monitor)) {
		mrc_log(0, "MRCACHE_MONITOR=\"%s\" is not one of auto, none, kernel, bpf, uffd, hooks", v);
		rc = -EINVAL;
	}
	if (mrc_env_size("MRCACHE_MAX_REGIONS", &cfg->max_regions))
		rc = -EINVAL;
	if (mrc_env_size("MRCACHE_MAX_BYTES", &cfg->max_bytes))
		rc = -EINVAL;
	if (mrc_env_bool("MRCACHE_STATS", &stats))
		rc = -EINVAL;
	if (check_log_env())
		rc = -EINVAL;
	if (check_bpf_variant())
		rc = -EINVAL;
	if (stats)
		cfg->flags |= MRC_FLAG_STATS_AT_DESTROY;
	return rc;
}

int mrc_config_resolve(const struct mrcache_config *in, struct mrcache_config *out)
{
	*out = *in;
	if (in->flags & ~MRCACHE_FLAG_ALL)
		return -EINVAL;
	if ((unsigned)in->monitor >= MRCACHE_MONITOR_COUNT_)
		return -EINVAL;
	switch (in->backend) {
	case MRCACHE_BACKEND_CALLBACKS:
		if (!in->ops || !(in->ops->reg || in->reg_ex) || !in->ops->dereg)
			return -EINVAL;
		break;
	case MRCACHE_BACKEND_URING:
		if (!in->ring)
			return -EINVAL;
		break;
	case MRCACHE_BACKEND_VERBS:
		if (!in->pd)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!(in->flags & MRCACHE_FLAG_NO_ENV))
		return apply_env(out);
	return 0;
}
