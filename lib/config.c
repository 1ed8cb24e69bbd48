/* SPDX-License-Identifier: MIT */
/*
 * config.c - defaults, checks, and the MRCACHE_* environment variables.
 *
 * Precedence: an environment variable overrides the program's config, so
 * an administrator can change the monitor or the limits without rebuilding;
 * a program that must not be overridden sets MRCACHE_FLAG_NO_ENV.  How
 * the values read: lib/env.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"
#include "env.h"

void mrcache_config_init(struct mrcache_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->backend = MRCACHE_BACKEND_CALLBACKS;
	cfg->monitor = MRCACHE_MONITOR_AUTO;
}

/* MRCACHE_BPF_VARIANT is read where the programs load
 * (monitor_bpf_load.c), which cannot fail a create: checked here. */
static int check_bpf_variant(void)
{
	const char *v = getenv("MRCACHE_BPF_VARIANT");

	if (!v || !strcmp(v, "zap") || !strcmp(v, "syscall"))
		return 0;
	mrc_log(0, "MRCACHE_BPF_VARIANT=\"%s\" is not one of zap, syscall", v);
	return -EINVAL;
}

/* MRCACHE_LOG_LEVEL and MRCACHE_DEBUG are read by lib/log.c, which cannot
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
	/* See mrc_config_resolve() in cache.h. */
	if (!stats)
		cfg->flags |= MRCACHE_FLAG_NO_ENV;
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
		if (!in->ops || !in->ops->reg || !in->ops->dereg)
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
