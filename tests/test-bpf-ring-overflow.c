/* SPDX-License-Identifier: MIT */
/* More invalidations at once than the bpf monitor's event ring holds: one
 * munmap over 12,000 cached regions.  The programs clear every word but can
 * queue only ~10,900 events; drain() must then rescan, so every region is
 * reclaimed (some by event, cause UNMAP, the rest by the rescan, cause
 * OVERFLOW).  Control: 1,000 regions fit the ring, no rescan.  (Callbacks
 * backend that pins nothing: this is about the monitor's bookkeeping.) */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include "mrcache.h"
#include "bpf-test.h"
#include "testutil.h"

#define PAGE 4096ul

static int reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
	       uint64_t *key)
{
	*handle = addr;
	*key = 0;
	return 0;
}

static int dereg(void *arg, void *handle)
{
	return 0;
}

/* Cache n separate one-page regions, munmap them in one call, reclaim. */
static void run(enum mrcache_monitor_kind kind, unsigned n, int expect_rescan)
{
	static const struct mrcache_backend_ops ops = { reg, dereg };
	struct mrcache_config cfg;
	struct mrcache_stats st;
	struct mrcache *cache;
	char *area;
	int ret;

	mrcache_config_init(&cfg);
	cfg.monitor = kind;
	cfg.ops = &ops;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	ret = mrcache_create(&cfg, &cache);
	if (ret)
		SKIP("monitor %s cannot start here: %s", mrcache_monitor_name(kind), strerror(-ret));
	area = mmap(NULL, 2 * PAGE * n, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(area != MAP_FAILED);
	if (area == MAP_FAILED)
		return;
	for (unsigned i = 0; i < n; i++) {
		struct mrcache_region *r;

		ret = mrcache_get(cache, area + 2 * PAGE * i, PAGE, MRCACHE_ACCESS_LOCAL_WRITE, &r);
		CHECK_EQ(ret, 0);
		if (!ret)
			mrcache_put(cache, r);
	}
	CHECK_EQ(munmap(area, 2 * PAGE * n), 0);
	mrcache_progress(cache);
	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	printf("  %-5s %6u regions: %6llu by event, %6llu by rescan, %llu left\n",
	       mrcache_monitor_name(kind), n,
	       (unsigned long long)st.invalidations[MRCACHE_CAUSE_UNMAP],
	       (unsigned long long)st.invalidations[MRCACHE_CAUSE_OVERFLOW],
	       (unsigned long long)st.regions);
	CHECK_EQ(st.regions, 0);
	CHECK_EQ(st.invalidations[MRCACHE_CAUSE_UNMAP] +
		 st.invalidations[MRCACHE_CAUSE_OVERFLOW], n);
	if (expect_rescan)
		CHECK(st.invalidations[MRCACHE_CAUSE_OVERFLOW] > 0);
	else
		CHECK_EQ(st.invalidations[MRCACHE_CAUSE_OVERFLOW], 0);
	CHECK_EQ(mrcache_destroy(cache), 0);
}

int main(void)
{
	enum mrcache_monitor_kind kind;

	bpf_test_pick_monitor();
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mrcache_monitor_parse(getenv("MRCACHE_MONITOR"), &kind))
		return 1;
	if (kind != MRCACHE_MONITOR_BPF)
		SKIP("the event ring is the bpf monitor's (MRCACHE_MONITOR=%s)",
		     mrcache_monitor_name(kind));
	run(kind, 1000, 0);
	run(kind, 12000, 1);
	return test_result();
}
