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
 *
 * A named cache (cfg.name "rdma") also reads MRCACHE_RDMA_<VAR> for the
 * per-cache variables (MONITOR, MAX_REGIONS, MAX_BYTES, STATS, DISABLE),
 * after MRCACHE_<VAR>: the name's variable wins, for that cache only.
 * Names are letters and digits, so MRCACHE_<NAME>_<VAR> splits one way;
 * the name is upper-cased in the variable.
 *
 * MRCACHE_MAX_REGIONS=0 keeps meaning "no limit", as max_regions = 0 does:
 * turning the cache off is MRCACHE_DISABLE=1 (pass-through), not a limit
 * of zero (which is what FI_MR_CACHE_MAX_COUNT=0 means to libfabric), so
 * a setting that worked before does not change meaning.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <ctype.h>
#include <stdio.h>
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
	now.name = c->name[0] ? c->name : NULL;
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

/* MRCACHE_AUTO_BPF is read where auto chooses (monitor/monitor.c), which
 * reads a bad value as "no": checked here. */
static int check_auto_bpf(void)
{
	int on;

	return mrc_env_bool("MRCACHE_AUTO_BPF", &on);
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

/* The per-cache variables with this prefix (MRCACHE_ or
 * MRCACHE_<NAME>_); *stats and *disable stay -1 when unset. */
static int apply_vars(struct mrcache_config *cfg, const char *prefix, int *stats,
		      int *disable)
{
	char var[MRCACHE_NAME_MAX + 32];
	const char *v;
	int rc = 0;

	snprintf(var, sizeof(var), "%sMONITOR", prefix);
	v = getenv(var);
	if (v && mrcache_monitor_parse(v, &cfg->monitor)) {
		mrc_log(0, "%s=\"%s\" is not one of auto, none, kernel, bpf, uffd, hooks", var, v);
		rc = -EINVAL;
	}
	snprintf(var, sizeof(var), "%sMAX_REGIONS", prefix);
	if (mrc_env_size(var, &cfg->max_regions))
		rc = -EINVAL;
	snprintf(var, sizeof(var), "%sMAX_BYTES", prefix);
	if (mrc_env_size(var, &cfg->max_bytes))
		rc = -EINVAL;
	snprintf(var, sizeof(var), "%sSTATS", prefix);
	if (mrc_env_bool(var, stats))
		rc = -EINVAL;
	snprintf(var, sizeof(var), "%sDISABLE", prefix);
	if (mrc_env_bool(var, disable))
		rc = -EINVAL;
	return rc;
}

/* Every variable is checked, so that one run names every bad value. */
static int apply_env(struct mrcache_config *cfg, const char *name)
{
	char prefix[MRCACHE_NAME_MAX + 16];
	int stats = -1, disable = -1, rc = 0;

	mrc_env_report();
	if (apply_vars(cfg, "MRCACHE_", &stats, &disable))
		rc = -EINVAL;
	if (name[0]) {
		size_t n = (size_t)snprintf(prefix, sizeof(prefix), "MRCACHE_%s_", name);

		for (size_t i = 0; i < n; i++)
			prefix[i] = (char)toupper((unsigned char)prefix[i]);
		if (apply_vars(cfg, prefix, &stats, &disable))
			rc = -EINVAL;
	}
	if (check_log_env())
		rc = -EINVAL;
	if (check_bpf_variant())
		rc = -EINVAL;
	if (check_auto_bpf())
		rc = -EINVAL;
	if (stats == 1)
		cfg->flags |= MRC_FLAG_STATS_AT_DESTROY;
	if (disable == 1)
		cfg->flags |= MRCACHE_FLAG_DISABLE;
	else if (disable == 0)
		cfg->flags &= ~MRCACHE_FLAG_DISABLE;
	return rc;
}

/* Letters and digits, 1 to MRCACHE_NAME_MAX of them, copied to out. */
static int copy_name(const char *in, char out[MRCACHE_NAME_MAX + 1])
{
	size_t n = 0;

	out[0] = 0;
	if (!in)
		return 0;
	while (in[n] && n <= MRCACHE_NAME_MAX && isalnum((unsigned char)in[n]))
		n++;
	if (n == 0 || n > MRCACHE_NAME_MAX || in[n]) {
		mrc_log(0, "cache name \"%.40s\" is not 1 to %d letters and digits",
			in, MRCACHE_NAME_MAX);
		return -EINVAL;
	}
	memcpy(out, in, n + 1);
	return 0;
}

int mrc_config_resolve(const struct mrcache_config *in, struct mrcache_config *out,
		       char name[MRCACHE_NAME_MAX + 1])
{
	*out = *in;
	out->name = NULL;
	if (in->flags & ~MRCACHE_FLAG_ALL)
		return -EINVAL;
	if (copy_name(in->name, name))
		return -EINVAL;
	out->name = name[0] ? name : NULL;
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
		return apply_env(out, name);
	return 0;
}
