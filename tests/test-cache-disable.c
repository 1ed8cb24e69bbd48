/* SPDX-License-Identifier: MIT */
/*
 * Turning the cache off (pass-through): MRCACHE_DISABLE=1, or
 * MRCACHE_FLAG_DISABLE, makes every get register and every last put
 * deregister; nothing stays cached and there are no hits.
 *  - MRCACHE_DISABLE=0 overrides the program's flag back on;
 *  - MRCACHE_MAX_REGIONS=0 still means no limit (the choice documented in
 *    mrcache(7)): the control, where the second get is a hit;
 *  - mrcache_config_get() and the statistics say the cache is disabled,
 *    and so does mrcache-info (tests/test-mrcache-info.c checks "caching").
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "testbackend.h"
#include "testenv.h"
#include "testutil.h"

static char *buf;

/* Two get/put rounds on one buffer; the child's exit code says how many
 * registrations the backend saw and whether anything stayed cached:
 * 10 * regs + (live after the puts), or 99 on an error. */
static int rounds(void *arg)
{
	unsigned flags = *(unsigned *)arg;
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *c;
	struct mrcache_region *r;
	unsigned live;
	FILE *f;
	char line[256];

	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.flags = (cfg.flags & ~MRCACHE_FLAG_NO_ENV) | flags;
	if (mrcache_create(&cfg, &c))
		return 99;
	for (int i = 0; i < 2; i++) {
		if (mrcache_get(c, buf, 4096, 0, &r) || mrcache_put(c, r))
			return 99;
	}
	live = tb.live;
	if (mrcache_config_get(c, &cfg) || mrcache_stats_get(c, &st))
		return 99;
	/* The state reads back, and the statistics line says so. */
	f = tmpfile();
	mrcache_stats_print(c, f);
	rewind(f);
	if (!fgets(line, sizeof(line), f))
		return 99;
	fclose(f);
	if (!!(cfg.flags & MRCACHE_FLAG_DISABLE) != !!strstr(line, "disabled"))
		return 98;
	if ((cfg.flags & MRCACHE_FLAG_DISABLE) && (st.hits || st.uncached != 2))
		return 97;
	if (mrcache_destroy(c))
		return 99;
	return (int)(10 * tb.regs + live);
}

static int run(const char *var, unsigned flags)
{
	const char *vars[] = { var, NULL };
	static struct test_child res;
	int rc = test_child_run(var ? vars : NULL, -1, rounds, &flags, &res);

	if (rc >= 90)
		fprintf(stderr, "%s flags %#x: %d: %s\n", var ? var : "-", flags, rc, res.err);
	return rc;
}

int main(void)
{
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(buf != MAP_FAILED);
	/* Cached: one registration, still live after the puts. */
	CHECK_EQ(run(NULL, 0), 11);
	CHECK_EQ(run("MRCACHE_MAX_REGIONS=0", 0), 11);
	CHECK_EQ(run("MRCACHE_DISABLE=0", 0), 11);
	/* Off: each get registers, each put deregisters. */
	CHECK_EQ(run("MRCACHE_DISABLE=1", 0), 20);
	CHECK_EQ(run("MRCACHE_DISABLE=yes", 0), 20);
	CHECK_EQ(run(NULL, MRCACHE_FLAG_DISABLE), 20);
	CHECK_EQ(run("MRCACHE_DISABLE=0", MRCACHE_FLAG_DISABLE), 11);
	CHECK_EQ(run("MRCACHE_DISABLE=maybe", 0), 99);
	return test_result();
}
