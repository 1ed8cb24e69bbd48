/* SPDX-License-Identifier: MIT */
/* guarantee.c - see guarantee.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "guarantee.h"
#include "oracle.h"

enum verdict { V_PASS, V_FAIL, V_SKIP };

void *guarantee_map(void *at, size_t len, int shared)
{
	int flags = (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS |
		    (at ? MAP_FIXED_NOREPLACE : 0);
	void *p = mmap(at, len, PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (at && p != at) {	/* kernels before 4.17 ignore the flag */
		munmap(p, len);
		return NULL;
	}
	return p;
}

static int prepare_anon(struct guarantee_ctx *c, int shared)
{
	c->len = GUARANTEE_LEN;
	c->addr = guarantee_map(NULL, c->len, shared);
	return c->addr ? 0 : -errno;
}

int guarantee_prepare_private(struct guarantee_ctx *c)
{
	return prepare_anon(c, 0);
}

int guarantee_prepare_shared(struct guarantee_ctx *c)
{
	return prepare_anon(c, 1);
}

void guarantee_release_maps(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
	if (c->aux)
		munmap(c->aux, c->aux_len);
}

static void report_case(const char *name, enum mrcache_monitor_kind m,
			 const char *verdict, const char *detail)
{
	printf("  %-18s %-7s %s", name, mrcache_monitor_name(m), verdict);
	if (detail)
		printf(" (%s)", detail);
	printf("\n");
}

/* One case under one monitor. */
static enum verdict run_case(struct oracle *o, struct mrcache *cache,
			     enum mrcache_monitor_kind m,
			     const struct guarantee_case *gc)
{
	struct guarantee_ctx ctx;
	enum verdict v = V_FAIL;
	const char *msg = NULL;
	int missed, ret, stale;
	char buf[200];

	memset(&ctx, 0, sizeof(ctx));
	ret = gc->prepare(&ctx);
	if (ret == GUARANTEE_SKIP) {
		report_case(gc->name, m, "SKIP", ctx.why);
		return V_SKIP;
	}
	if (ret) {
		snprintf(buf, sizeof(buf), "prepare: %s", strerror(-ret));
		report_case(gc->name, m, "FAIL", buf);
		return V_FAIL;
	}
	ret = oracle_probe(o, cache, ctx.addr, ctx.len, &missed);
	if (ret == -EOPNOTSUPP)
		goto unpinnable;
	if (ret < 0) {
		snprintf(buf, sizeof(buf), "first get or I/O: %s", strerror(-ret));
		msg = buf;
		goto out;
	}
	if (ret != ORACLE_FRESH || !missed) {
		msg = "first get: expected a miss and fresh data";
		goto out;
	}
	ret = oracle_probe(o, cache, ctx.addr, ctx.len, &missed);
	if (ret != ORACLE_FRESH || missed) {
		msg = "second get: expected a hit (the range must be cached)";
		goto out;
	}
	ret = gc->apply(&ctx);
	if (ret == GUARANTEE_SKIP) {
		report_case(gc->name, m, "SKIP", ctx.why);
		v = V_SKIP;
		goto release;
	}
	if (ret) {
		snprintf(buf, sizeof(buf), "operation: %s", strerror(-ret));
		msg = buf;
		goto out;
	}
	ret = oracle_probe(o, cache, ctx.addr, ctx.len, &missed);
	if (ret == -EOPNOTSUPP && m != MRCACHE_MONITOR_NONE && missed) {
		/* The get went to the backend, not to the stale registration:
		 * the guarantee held, though the new memory cannot be pinned. */
		v = V_PASS;
		msg = "miss (this kernel's io_uring cannot pin the new memory)";
		goto out;
	}
	if (ret == -EOPNOTSUPP)
		goto unpinnable;
	if (ret < 0) {
		snprintf(buf, sizeof(buf), "get or I/O after the operation: %s",
			 strerror(-ret));
		msg = buf;
		goto out;
	}
	stale = ret == ORACLE_STALE;
	if (m == MRCACHE_MONITOR_NONE) {
		/* The negative control: the hazard must be visible. */
		if (missed)
			msg = "negative control missed: the cache dropped the region without a monitor";
		else if (!stale && !gc->same_pages)
			msg = "negative control: a stale registration went unnoticed by the oracle";
		else {
			v = V_PASS;
			msg = stale ? "negative control: hit, oracle saw stale data"
				    : gc->same_pages;
		}
	} else if (stale) {
		msg = missed ? "missed, but the new registration is STALE"
			     : "hit after the operation returned: STALE data";
	} else if (!missed && !gc->same_pages) {
		msg = "hit after the operation returned (the pages changed)";
	} else {
		/* Where the pages provably survive, keeping the registration is
		 * right too (a monitor that checks the page tables does). */
		v = V_PASS;
		msg = missed ? "miss, fresh data"
			     : "hit, fresh data: the pinned pages survived";
	}
out:
	report_case(gc->name, m, v == V_PASS ? "PASS" : "FAIL", msg);
	goto release;
unpinnable:
	/* io_uring on Linux 6.1 refuses file-backed memory other than shmem
	 * and hugetlbfs mappings, SysV shm included (6.18 pins it): nothing
	 * to register, nothing to check. */
	report_case(gc->name, m, "SKIP",
		    "this kernel's io_uring cannot pin this kind of memory");
	v = V_SKIP;
release:
	mrcache_flush(cache);
	if (gc->release)
		gc->release(&ctx);
	mrcache_flush(cache);
	return v;
}

/* Monitors to try: `none` (the control) and MRCACHE_MONITOR or all. */
static size_t pick_monitors(enum mrcache_monitor_kind *out)
{
	static const enum mrcache_monitor_kind all[] = {
		MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
	};
	const char *env = getenv("MRCACHE_MONITOR");
	enum mrcache_monitor_kind m;
	size_t n = 0;

	out[n++] = MRCACHE_MONITOR_NONE;
	if (env && *env) {
		if (mrcache_monitor_parse(env, &m) == 0) {
			if (m != MRCACHE_MONITOR_NONE)
				out[n++] = m;
			return n;
		}
		fprintf(stderr, "MRCACHE_MONITOR=%s is not a monitor; trying all\n", env);
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		out[n++] = all[i];
	return n;
}

int guarantee_run(const struct guarantee_case *cases, size_t ncases)
{
	enum mrcache_monitor_kind mons[MRCACHE_MONITOR_COUNT_ + 1];
	size_t nmons = pick_monitors(mons);
	unsigned real_pass = 0, fail = 0, control_pass = 0;
	struct oracle o;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = oracle_init(&o, 1, GUARANTEE_MAX_LEN);
	if (ret) {
		printf("SKIP: io_uring unusable here: %s\n", strerror(-ret));
		return 77;
	}
	for (size_t i = 0; i < nmons; i++) {
		struct mrcache_config cfg;
		struct mrcache *cache;

		oracle_config(&o, &cfg, mons[i], 64);
		ret = mrcache_create(&cfg, &cache);
		if (ret) {
			printf("  %-18s %-7s SKIP (cannot start here: %s)\n", "*",
			       mrcache_monitor_name(mons[i]), strerror(-ret));
			if (mons[i] == MRCACHE_MONITOR_NONE)
				fail++;
			continue;
		}
		for (size_t c = 0; c < ncases; c++) {
			enum verdict v = run_case(&o, cache, mons[i], &cases[c]);

			if (v == V_FAIL)
				fail++;
			else if (v == V_PASS && mons[i] == MRCACHE_MONITOR_NONE)
				control_pass++;
			else if (v == V_PASS)
				real_pass++;
		}
		ret = mrcache_destroy(cache);
		if (ret) {
			printf("  mrcache_destroy(%s): %s\n",
			       mrcache_monitor_name(mons[i]), strerror(-ret));
			fail++;
		}
	}
	oracle_fini(&o);
	if (fail) {
		printf("%u failure(s)\n", fail);
		return 1;
	}
	if (!control_pass) {
		printf("SKIP: the negative control could not run\n");
		return 77;
	}
	if (!real_pass) {
		printf("SKIP: no monitor that starts here could run these cases\n");
		return 77;
	}
	return 0;
}
