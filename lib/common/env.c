/* SPDX-License-Identifier: MIT */
/*
 * env.c - the MRCACHE_* variables: which exist, and how their values read.
 *
 * A value reads the same in every variable, as UCX reads its own:
 *  - a boolean is 1/0, yes/no, on/off, true/false or y/n, in any case;
 *  - a size or a count is decimal or 0x-prefixed hex, optionally followed
 *    by K, KB, KiB, M, MB, MiB, G, GB, GiB, T, TB or TiB in any case, all
 *    binary (1024-based); "inf" and "unlimited" mean no limit (0);
 *  - a log level is 0/error, 1/info (or debug) or 2/trace, in any case.
 * Anything else is -EINVAL and a message naming the variable.  A variable
 * with the prefix that the library does not read is most likely a typo:
 * it gets a warning, once per process.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "common/env.h"
#include "mrcache.h"
#include "monitor/monitor.h"	/* mrc_log */

#define PREFIX "MRCACHE_"

/* Every variable the library reads, in name order, documented in
 * README.md's table and mrcache(7) (tests/test-env-documented.c). */
static const struct {
	const char *name, *def, *help;
} known[] = {
	{ "MRCACHE_AUTO_BPF", "0",
	  "boolean, for administrators: auto may attach the bpf programs (they tax every syscall of every process)" },
	{ "MRCACHE_BPF_PREEMPTIBLE_OK", "0",
	  "boolean: true starts the bpf monitor on a kernel that can preempt (and so skip) its programs; negative controls only" },
	{ "MRCACHE_BPF_VARIANT", "",
	  "zap or syscall: force the bpf monitor's variant, no fallback (unset: zap, else syscall)" },
	{ "MRCACHE_DEBUG", "0", "boolean: true means MRCACHE_LOG_LEVEL=1" },
	{ "MRCACHE_DISABLE", "0",
	  "boolean: pass-through, nothing cached: every get registers, every last put deregisters" },
	{ "MRCACHE_LOG_LEVEL", "error",
	  "0/error, 1/info or debug (monitor choice and why, variables read), 2/trace (also libbpf, refused registrations)" },
	{ "MRCACHE_MAX_BYTES", "unlimited",
	  "a size: most bytes cached (0 or unlimited: no limit); overrides max_bytes" },
	{ "MRCACHE_MAX_REGIONS", "unlimited",
	  "a count: most regions cached (0 or unlimited: no limit, not off: see MRCACHE_DISABLE); overrides max_regions" },
	{ "MRCACHE_MONITOR", "auto",
	  "auto, kernel, bpf, uffd, hooks or none; overrides the config's monitor" },
	{ "MRCACHE_PROF", "",
	  "prefix: write latency histograms to prefix.<pid>.json at exit (for mrc-prof)" },
	{ "MRCACHE_STATS", "0", "boolean: print the statistics when a cache is destroyed" },
	{ "MRCACHE_<NAME>_<VAR>", "",
	  "for the cache named NAME (cfg.name, upper-cased) only: VAR is MONITOR, MAX_REGIONS, MAX_BYTES, STATS or DISABLE; wins over MRCACHE_<VAR>" },
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

int mrcache_env_describe(unsigned index, const char **name, const char **def,
			 const char **help)
{
	if (index >= NKNOWN)
		return -ENOENT;
	if (name)
		*name = known[index].name;
	if (def)
		*def = known[index].def;
	if (help)
		*help = known[index].help;
	return 0;
}

int mrc_parse_bool(const char *s, int *out)
{
	static const char *const words[][2] = {
		{ "0", "1" }, { "no", "yes" }, { "off", "on" },
		{ "false", "true" }, { "n", "y" },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		for (int v = 0; v < 2; v++) {
			if (!strcasecmp(s, words[i][v])) {
				*out = v;
				return 0;
			}
		}
	}
	return -EINVAL;
}

int mrc_parse_log_level(const char *s, int *out)
{
	static const char *const names[][3] = {
		{ "0", "error", "error" }, { "1", "info", "debug" }, { "2", "trace", "trace" },
	};

	for (int level = 0; level < 3; level++) {
		if (!strcasecmp(s, names[level][0]) || !strcasecmp(s, names[level][1]) ||
		    !strcasecmp(s, names[level][2])) {
			*out = level;
			return 0;
		}
	}
	return -EINVAL;
}

/* "", "B" or "iB" after a unit letter, in any case. */
static int unit_tail(const char *s)
{
	return !*s || !strcasecmp(s, "b") || !strcasecmp(s, "ib");
}

int mrc_parse_size(const char *s, size_t *out)
{
	static const char units[] = "kmgt";
	const char *u;
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!strcasecmp(s, "inf") || !strcasecmp(s, "unlimited")) {
		*out = 0;
		return 0;
	}
	/* No sign, no blank: strtoull would take "-1" as ULLONG_MAX. */
	if (!isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		v = strtoull(s, &end, 16);
	else
		v = strtoull(s, &end, 10);	/* not base 0: "010" is ten */
	if (errno)
		return -EINVAL;
	if (*end) {
		u = strchr(units, tolower((unsigned char)*end));
		if (!u || !unit_tail(end + 1))
			return -EINVAL;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (v > (SIZE_MAX >> shift))
		return -EINVAL;
	*out = (size_t)v << shift;
	return 0;
}

int mrc_env_bool(const char *name, int *out)
{
	const char *v = getenv(name);

	if (!v || !mrc_parse_bool(v, out))
		return 0;
	mrc_log(0, "%s=\"%s\" is not a boolean (1/0, yes/no, on/off, true/false, y/n)",
		name, v);
	return -EINVAL;
}

int mrc_env_size(const char *name, size_t *out)
{
	const char *v = getenv(name);

	if (!v || !mrc_parse_size(v, out))
		return 0;
	mrc_log(0, "%s=\"%s\" is not a size (e.g. 1000, 0x1000, 64K, 16MiB, 2GB, "
		"unlimited; units are 1024-based)", name, v);
	return -EINVAL;
}

/* MRCACHE_<NAME>_<VAR>: NAME letters and digits, VAR a per-cache one. */
static int is_per_name(const char *var, size_t namelen)
{
	static const char *const per_cache[] = {
		"MONITOR", "MAX_REGIONS", "MAX_BYTES", "STATS", "DISABLE",
	};
	const char *name = var + strlen(PREFIX), *end = var + namelen;
	const char *p = name;

	while (p < end && isalnum((unsigned char)*p))
		p++;
	if (p == name || p >= end || *p != '_' || p - name > 32)
		return 0;
	p++;
	for (size_t i = 0; i < sizeof(per_cache) / sizeof(per_cache[0]); i++)
		if (strlen(per_cache[i]) == (size_t)(end - p) && !strncmp(p, per_cache[i], (size_t)(end - p)))
			return 1;
	return 0;
}

static int is_known(const char *var, size_t namelen)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (strlen(known[i].name) == namelen && !strncmp(var, known[i].name, namelen))
			return 1;
	return is_per_name(var, namelen);
}

/* Append s to buf (of size n, holding len bytes), "..." once it is full. */
static size_t append(char *buf, size_t n, size_t len, const char *sep,
		     const char *s, size_t slen)
{
	int w;

	if (len + 4 >= n)
		return len;
	w = snprintf(buf + len, n - len, "%s%.*s", len ? sep : "", (int)slen, s);
	if (w < 0 || (size_t)w >= n - len - 4) {
		snprintf(buf + n - 4, 4, "...");
		return n - 1;
	}
	return len + (size_t)w;
}

static void warn_unknown(const char *names)
{
	static int warned;
	char list[512];
	size_t len = 0;

	if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		return;
	list[0] = 0;
	for (size_t i = 0; i < NKNOWN; i++)
		len = append(list, sizeof(list), len, ", ", known[i].name, strlen(known[i].name));
	mrc_log(0, "ignoring unknown variable(s) %s; the variables mrcache reads are %s",
		names, list);
}

void mrc_env_report(void)
{
	char names[512];
	size_t len = 0, namelen;

	names[0] = 0;
	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, PREFIX, strlen(PREFIX)))
			continue;
		namelen = strcspn(*e, "=");
		if (is_known(*e, namelen))
			mrc_log(1, "environment: %s", *e);
		else
			len = append(names, sizeof(names), len, ", ", *e, namelen);
	}
	if (len)
		warn_unknown(names);
}
