/* SPDX-License-Identifier: MIT */
/*
 * monitor-choice: which monitor a cache runs, chosen in the program and
 * overridden by the environment, and what the chosen one guarantees.
 *   monitor-choice [MONITOR] [--no-env]
 * MONITOR is auto (the default), kernel, bpf, uffd, hooks or none.  This
 * program links libmrcache-hooks (pkg-config mrcache-hooks), so the hooks
 * monitor can run too.  MRCACHE_MONITOR=NAME overrides the program's
 * choice, unless --no-env (MRCACHE_FLAG_NO_ENV); MRCACHE_DEBUG=1 says why
 * each monitor `auto` passed over could not start.
 * Exit 0, 1 on failure, 77 when the monitor asked for cannot run here.
 */
#include <errno.h>
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

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

/* Every monitor but none drops a cached buffer's registration when the
 * buffer is unmapped, so the next get of that address misses. */
static int check_guarantee(struct mrcache *cache, enum mrcache_monitor_kind monitor)
{
	size_t len = 1u << 20;
	struct mrcache_region *r;
	struct mrcache_stats st;
	void *buf;
	int rc, i;

	for (i = 0; i < 2; i++) {
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			return -errno;
		rc = mrcache_get(cache, buf, len, 0, &r);
		if (rc)
			return rc;
		mrcache_put(cache, r);
		munmap(buf, len);
	}
	mrcache_progress(cache);
	mrcache_stats_get(cache, &st);
	printf("2 buffers unmapped: %llu registrations dropped by the monitor\n",
	       (unsigned long long)st.invalidations[MRCACHE_CAUSE_UNMAP]);
	if (monitor != MRCACHE_MONITOR_NONE && st.invalidations[MRCACHE_CAUSE_UNMAP] != 2)
		return -EPROTO;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct mrcache_backend_ops ops = { .reg = reg, .dereg = dereg };
	struct mrcache_config cfg, used;
	struct mrcache *cache;
	int i, rc;

	mrcache_config_init(&cfg);
	cfg.ops = &ops;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-env")) {
			cfg.flags |= MRCACHE_FLAG_NO_ENV;
		} else if (mrcache_monitor_parse(argv[i], &cfg.monitor)) {
			fprintf(stderr, "usage: monitor-choice [auto|kernel|bpf|uffd|hooks|none] [--no-env]\n");
			return 1;
		}
	}
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "monitor-choice: monitor %s cannot run here: %s\n",
			mrcache_monitor_name(cfg.monitor), strerror(-rc));
		return 77;
	}
	mrcache_config_get(cache, &used);
	printf("asked for %s, running %s\n", mrcache_monitor_name(cfg.monitor),
	       mrcache_monitor_name(used.monitor));
	rc = check_guarantee(cache, used.monitor);
	mrcache_destroy(cache);
	if (rc)
		fprintf(stderr, "monitor-choice: %s\n", strerror(-rc));
	return rc ? 1 : 0;
}
