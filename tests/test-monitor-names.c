/* SPDX-License-Identifier: MIT */
/*
 * Monitor names parse in any case (mrcache_monitor_parse() and so
 * MRCACHE_MONITOR): "UFFD" is uffd.  Controls: a prefix, a blank or an
 * unknown name are still -EINVAL, and the names printed stay lower case.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testutil.h"

int main(void)
{
	static const struct { const char *name; enum mrcache_monitor_kind kind; } ok[] = {
		{ "UFFD", MRCACHE_MONITOR_UFFD }, { "Bpf", MRCACHE_MONITOR_BPF },
		{ "KERNEL", MRCACHE_MONITOR_KERNEL }, { "nOnE", MRCACHE_MONITOR_NONE },
		{ "Hooks", MRCACHE_MONITOR_HOOKS }, { "AUTO", MRCACHE_MONITOR_AUTO },
	};
	static const char *const bad[] = { "uff", "uffd ", " uffd", "", "uffdx", "k" };
	enum mrcache_monitor_kind kind;
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		kind = (enum mrcache_monitor_kind)99;
		CHECK_EQ(mrcache_monitor_parse(ok[i].name, &kind), 0);
		CHECK_EQ(kind, ok[i].kind);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_EQ(mrcache_monitor_parse(bad[i], &kind), -EINVAL);
	CHECK(!strcmp(mrcache_monitor_name(MRCACHE_MONITOR_UFFD), "uffd"));

	/* The variable reads the same way. */
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_AUTO);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	setenv("MRCACHE_MONITOR", "NONE", 1);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	if (!test_failures) {
		CHECK_EQ(mrcache_config_get(c, &cfg), 0);
		CHECK_EQ(cfg.monitor, MRCACHE_MONITOR_NONE);
		CHECK_EQ(mrcache_destroy(c), 0);
	}
	return test_result();
}
