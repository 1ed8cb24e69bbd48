/* SPDX-License-Identifier: MIT */
/*
 * MRCACHE_MAX_BYTES and MRCACHE_MAX_REGIONS read decimal, 0x hex, the
 * binary units K/KB/KiB, M/MB/MiB, G/GB/GiB, T/TB/TiB in any case (1024-
 * based, as UCX reads them), and "inf"/"unlimited" for no limit; they
 * override the program's value.  Anything else (signs, blanks, fractions,
 * unknown units, overflow) fails mrcache_create() with -EINVAL and a
 * message naming the variable: the control that the parser is not just
 * accepting everything.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cache/cache.h"
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

#define PROGRAM_VALUE 12345

/* The resolved limit, or the negative errno of create. */
static long long resolved(const char *var, const char *value)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	long long v;
	int rc;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	cfg.max_bytes = cfg.max_regions = PROGRAM_VALUE;
	setenv(var, value, 1);
	rc = mrcache_create(&cfg, &c);
	unsetenv(var);
	if (rc)
		return rc;
	v = (long long)(strcmp(var, "MRCACHE_MAX_BYTES") ? c->cfg.max_regions : c->cfg.max_bytes);
	mrcache_destroy(c);
	return v;
}

static const char *bad_var, *bad_value;

static int create_bad(void *arg)
{
	return resolved(bad_var, bad_value) == -EINVAL ? 2 : 0;
}

/* The failure, in a child, names the variable and the value. */
static void check_message(const char *var, const char *value)
{
	struct test_child res;
	char message[160];

	bad_var = var;
	bad_value = value;
	snprintf(message, sizeof(message), "%s=\"%s\" is not a size", var, value);
	CHECK_EQ(test_child_run(NULL, -1, create_bad, NULL, &res), 2);
	if (!strstr(res.err, message)) {
		fprintf(stderr, "want \"%s\" in: %s\n", message, res.err);
		CHECK(0);
	}
}

int main(void)
{
	static const struct { const char *s; unsigned long long v; } good[] = {
		{ "4096", 4096 }, { "0", 0 }, { "010", 10 },
		{ "0x1000", 4096 }, { "0X10", 16 }, { "0xfF", 255 },
		{ "64k", 64ull << 10 }, { "64K", 64ull << 10 }, { "64KB", 64ull << 10 },
		{ "64kb", 64ull << 10 }, { "64KiB", 64ull << 10 }, { "64kib", 64ull << 10 },
		{ "16M", 16ull << 20 }, { "16MB", 16ull << 20 }, { "16MiB", 16ull << 20 },
		{ "2g", 2ull << 30 }, { "2G", 2ull << 30 }, { "2GB", 2ull << 30 },
		{ "2GiB", 2ull << 30 }, { "1T", 1ull << 40 }, { "1TiB", 1ull << 40 },
		{ "0x10K", 16ull << 10 },
		{ "inf", 0 }, { "INF", 0 }, { "unlimited", 0 }, { "Unlimited", 0 },
	};
	static const char *const bad[] = {
		"", "-5", "+5", " 5", "5 ", "12x", "5KK", "5KiBs", "5Ki", "5 K", "0x",
		"1.5M", "KB", "inf0", "infinity", "99999999999999999999",
		"17179869184G", "0x1p3",
	};
	static const char *const vars[] = { "MRCACHE_MAX_BYTES", "MRCACHE_MAX_REGIONS" };

	test_env_clear();
	for (size_t k = 0; k < sizeof(vars) / sizeof(vars[0]); k++) {
		CHECK_EQ(resolved(vars[k], "0x100"), 256);
		for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
			long long got = resolved(vars[k], good[i].s);

			if (got != (long long)good[i].v) {
				fprintf(stderr, "%s=%s: %lld, want %llu\n", vars[k], good[i].s,
					got, good[i].v);
				CHECK(0);
			}
		}
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			long long got = resolved(vars[k], bad[i]);

			if (got != -EINVAL) {
				fprintf(stderr, "%s=\"%s\": %lld, want -EINVAL\n", vars[k], bad[i], got);
				CHECK(0);
			}
		}
		check_message(vars[k], "12x");
	}
	/* Without the variable, the program's value stands. */
	CHECK_EQ(resolved("MRCACHE_STATS", "0"), PROGRAM_VALUE);
	return test_result();
}
