/* SPDX-License-Identifier: MIT */
/*
 * config.c - defaults, checks, and the MRCACHE_* environment variables.
 *
 * Precedence: an environment variable overrides the program's config, so
 * an administrator can change the monitor or the limits without rebuilding;
 * a program that must not be overridden sets MRCACHE_FLAG_NO_ENV.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cache.h"

void mrcache_config_init(struct mrcache_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->backend = MRCACHE_BACKEND_CALLBACKS;
	cfg->monitor = MRCACHE_MONITOR_AUTO;
}

/* "1234", "64k", "16M", "2g" (powers of 1024). */
static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: break;
	}
	if (*end || (shift && v > (~0ull >> shift)))
		return -EINVAL;
	*out = (size_t)(v << shift);
	return 0;
}

static int env_size(const char *name, size_t *field)
{
	const char *v = getenv(name);

	if (!v)
		return 0;
	if (parse_size(v, field)) {
		mrc_log(0, "%s=\"%s\" is not a size (e.g. 1000, 64k, 16M, 2G)", name, v);
		return -EINVAL;
	}
	return 0;
}

static int apply_env(struct mrcache_config *cfg)
{
	const char *v = getenv("MRCACHE_MONITOR");
	int rc;

	if (v && mrcache_monitor_parse(v, &cfg->monitor)) {
		mrc_log(0, "MRCACHE_MONITOR=\"%s\" is not one of auto, none, kernel, bpf, uffd, hooks", v);
		return -EINVAL;
	}
	rc = env_size("MRCACHE_MAX_REGIONS", &cfg->max_regions);
	if (rc == 0)
		rc = env_size("MRCACHE_MAX_BYTES", &cfg->max_bytes);
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
