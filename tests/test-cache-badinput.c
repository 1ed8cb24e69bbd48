/* SPDX-License-Identifier: MIT */
/*
 * Bad input gives -EINVAL, never a crash: NULL, zero length, addr + len
 * overflow, unknown access or flag bits, bad configs and bad MRCACHE_*
 * variables.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testutil.h"

static int create_with_env(struct test_backend *tb, const char *var, const char *value)
{
	struct mrcache_config cfg;
	struct mrcache *c;
	int rc;

	test_backend_config(tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags &= ~MRCACHE_FLAG_NO_ENV;
	setenv(var, value, 1);
	rc = mrcache_create(&cfg, &c);
	unsetenv(var);
	if (rc == 0)
		mrcache_destroy(c);
	return rc;
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct mrcache_region *r = NULL;
	struct mrcache_stats st;
	char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	enum mrcache_monitor_kind kind;

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(NULL, &c), -EINVAL);
	CHECK_EQ(mrcache_create(&cfg, NULL), -EINVAL);
	cfg.flags |= 1u << 20;
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.monitor = (enum mrcache_monitor_kind)99;
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.backend = (enum mrcache_backend_kind)99;
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.ops = NULL;
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.backend = MRCACHE_BACKEND_URING;	/* no ring */
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.backend = MRCACHE_BACKEND_VERBS;	/* no pd */
	CHECK_EQ(mrcache_create(&cfg, &c), -EINVAL);

	CHECK_EQ(create_with_env(&tb, "MRCACHE_MONITOR", "bogus"), -EINVAL);
	CHECK_EQ(create_with_env(&tb, "MRCACHE_MAX_REGIONS", "12x"), -EINVAL);
	CHECK_EQ(create_with_env(&tb, "MRCACHE_MAX_BYTES", "-5"), -EINVAL);
	CHECK_EQ(create_with_env(&tb, "MRCACHE_MAX_BYTES", "99999999999999999999"), -EINVAL);
	CHECK_EQ(create_with_env(&tb, "MRCACHE_MAX_BYTES", "16M"), 0);
	CHECK_EQ(create_with_env(&tb, "MRCACHE_MONITOR", "none"), 0);
	CHECK_EQ(mrcache_monitor_parse("uffd", &kind), 0);
	CHECK_EQ(kind, MRCACHE_MONITOR_UFFD);
	CHECK_EQ(mrcache_monitor_parse(NULL, &kind), -EINVAL);

	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	CHECK_EQ(mrcache_get(NULL, buf, 1, 0, &r), -EINVAL);
	CHECK_EQ(mrcache_get(c, NULL, 1, 0, &r), -EINVAL);
	CHECK_EQ(mrcache_get(c, buf, 0, 0, &r), -EINVAL);
	CHECK_EQ(mrcache_get(c, buf, 1, 0, NULL), -EINVAL);
	CHECK_EQ(mrcache_get(c, buf, SIZE_MAX, 0, &r), -EINVAL);
	CHECK_EQ(mrcache_get(c, (void *)(UINTPTR_MAX - 10), 11, 0, &r), -EINVAL);
	CHECK_EQ(mrcache_get(c, (void *)(UINTPTR_MAX - 10), 5, 0, &r), -EINVAL);
	CHECK_EQ(mrcache_get(c, buf, 1, 1u << 7, &r), -EINVAL);
	CHECK_EQ(mrcache_put(c, NULL), -EINVAL);
	CHECK_EQ(mrcache_put(NULL, r), -EINVAL);
	CHECK_EQ(mrcache_invalidate(c, NULL, 1), -EINVAL);
	CHECK_EQ(mrcache_invalidate(c, buf, 0), -EINVAL);
	CHECK_EQ(mrcache_invalidate(c, buf, SIZE_MAX), -EINVAL);
	CHECK_EQ(mrcache_flush(NULL), -EINVAL);
	CHECK_EQ(mrcache_progress(NULL), -EINVAL);
	CHECK_EQ(mrcache_stats_get(c, NULL), -EINVAL);
	CHECK_EQ(mrcache_stats_get(NULL, &st), -EINVAL);
	CHECK_EQ(mrcache_stats_print(c, NULL), -EINVAL);
	CHECK_EQ(mrcache_destroy(NULL), -EINVAL);
	CHECK(mrcache_region_addr(NULL) == NULL);
	CHECK_EQ(mrcache_region_length(NULL), 0);
	CHECK(mrcache_monitor_name((enum mrcache_monitor_kind)42) != NULL);
	CHECK(mrcache_cause_name((enum mrcache_cause)42) != NULL);
	/* Nothing was registered by all that. */
	CHECK_EQ(tb.regs, 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
