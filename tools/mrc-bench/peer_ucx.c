/* SPDX-License-Identifier: MIT */
/*
 * peer_ucx.c - UCX's ucs_rcache (Debian's libucx-dev) with our callbacks.
 *
 * Driven as UCX's own InfiniBand memory domain drives it: hand-filled
 * parameters (1.13 has no defaults helper), unmap events from UCM's hooks
 * (UCX_MEM_MMAP_HOOK_MODE left at its default: `reloc` livelocks).  UCX
 * queues the regions an munmap hits and deregisters them in its next
 * ucs_rcache_get(); it has no progress call, so progress() is a get and put
 * of a sentinel page that stays cached.
 *
 * libucs is dlopen()ed by the UCX peer's own child process, never linked:
 * loading it installs UCM's hooks, which patch the process's munmap (here
 * mrcache's interposed one) to a raw syscall, and mrcache's hooks monitor
 * would then never see an munmap.  Two hook owners in one process do not
 * mix; each peer gets a process of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "bench.h"

#ifdef MRC_BENCH_UCX
#include <dlfcn.h>
#include <sys/mman.h>
#include <ucm/api/ucm.h>
#include <ucs/memory/rcache.h>

struct ucx_region {
	ucs_rcache_region_t super;
	void *handle;
	uint64_t key;
};

struct ucx_peer {
	ucs_rcache_t *rcache;
	void *sentinel;
};

/* The few entry points used, resolved from libucs at open(). */
static struct {
	ucs_status_t (*create)(const ucs_rcache_params_t *, const char *,
			       ucs_stats_node_t *, ucs_rcache_t **);
	void (*destroy)(ucs_rcache_t *);
	ucs_status_t (*get)(ucs_rcache_t *, void *, size_t, int, void *,
			    ucs_rcache_region_t **);
	void (*put)(ucs_rcache_t *, ucs_rcache_region_t *);
	const char *(*status_string)(ucs_status_t);
} ucs;

static int ucx_load(struct bench_peer *p)
{
	void *lib = dlopen("libucs.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);

	if (!lib) {
		snprintf(p->why, sizeof(p->why), "dlopen: %s", dlerror());
		return -ENOTSUP;
	}
	ucs.create = (__typeof__(ucs.create))dlsym(lib, "ucs_rcache_create");
	ucs.destroy = (__typeof__(ucs.destroy))dlsym(lib, "ucs_rcache_destroy");
	ucs.get = (__typeof__(ucs.get))dlsym(lib, "ucs_rcache_get");
	ucs.put = (__typeof__(ucs.put))dlsym(lib, "ucs_rcache_region_put");
	ucs.status_string = (__typeof__(ucs.status_string))
		dlsym(lib, "ucs_status_string");
	if (!ucs.create || !ucs.destroy || !ucs.get || !ucs.put ||
	    !ucs.status_string) {
		snprintf(p->why, sizeof(p->why),
			 "libucs.so.0 lacks the ucs_rcache entry points");
		return -ENOTSUP;
	}
	return 0;
}

static ucs_status_t ucx_mem_reg(void *context, ucs_rcache_t *rcache,
				void *arg, ucs_rcache_region_t *region,
				uint16_t flags)
{
	struct bench_peer *p = context;
	struct ucx_region *r = (struct ucx_region *)region;
	int ret;

	ret = pins_reg(p->pins, (void *)region->super.start,
		       region->super.end - region->super.start, &r->handle,
		       &r->key);
	if (ret == -ENOMEM || ret == -ENOSPC || ret == -EAGAIN)
		return UCS_ERR_EXCEEDS_LIMIT;
	return ret ? UCS_ERR_IO_ERROR : UCS_OK;
}

static void ucx_mem_dereg(void *context, ucs_rcache_t *rcache,
			  ucs_rcache_region_t *region)
{
	struct bench_peer *p = context;

	pins_dereg(p->pins, ((struct ucx_region *)region)->handle);
}

static void ucx_dump_region(void *context, ucs_rcache_t *rcache,
			    ucs_rcache_region_t *region, char *buf, size_t max)
{
	snprintf(buf, max, "key %llu",
		 (unsigned long long)((struct ucx_region *)region)->key);
}

static const ucs_rcache_ops_t ucx_ops = {
	.mem_reg = ucx_mem_reg,
	.mem_dereg = ucx_mem_dereg,
	.dump_region = ucx_dump_region,
};

static int ucx_open(struct bench_peer *p)
{
	ucs_rcache_params_t params = {
		.region_struct_size = sizeof(struct ucx_region),
		.alignment = page_size(),
		.max_alignment = page_size(),
		.ucm_events = UCM_EVENT_VM_UNMAPPED,
		.ucm_event_priority = 1000,	/* as uct_ib_md */
		.ops = &ucx_ops,
		.context = p,
		.flags = 0,
		.max_regions = (unsigned long)-1,
		.max_size = (size_t)-1,
		.max_unreleased = (size_t)-1,
	};
	struct ucx_peer *u;
	ucs_status_t st;
	int ret = ucx_load(p);

	if (ret < 0)
		return ret;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->sentinel = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u->sentinel == MAP_FAILED) {
		free(u);
		return -ENOMEM;
	}
	st = ucs.create(&params, "mrc-bench", NULL, &u->rcache);
	if (st != UCS_OK) {
		snprintf(p->why, sizeof(p->why), "ucs_rcache_create: %s",
			 ucs.status_string(st));
		munmap(u->sentinel, page_size());
		free(u);
		return -ENOTSUP;
	}
	p->priv = u;
	return 0;
}

static void ucx_close(struct bench_peer *p)
{
	struct ucx_peer *u = p->priv;

	ucs.destroy(u->rcache);
	munmap(u->sentinel, page_size());
	free(u);
}

static int ucx_get(struct bench_peer *p, void *addr, size_t len, void **ref,
		   uint64_t *key)
{
	struct ucx_peer *u = p->priv;
	ucs_rcache_region_t *region;
	ucs_status_t st;

	st = ucs.get(u->rcache, addr, len, PROT_READ | PROT_WRITE, NULL,
		     &region);
	if (st != UCS_OK)
		return st == UCS_ERR_EXCEEDS_LIMIT ? -ENOSPC : -EIO;
	*ref = region;
	*key = ((struct ucx_region *)region)->key;
	return 0;
}

static void ucx_put(struct bench_peer *p, void *ref)
{
	struct ucx_peer *u = p->priv;

	ucs.put(u->rcache, ref);
}

static void ucx_progress(struct bench_peer *p)
{
	struct ucx_peer *u = p->priv;
	void *ref;

	if (peer_get(p, u->sentinel, page_size(), &ref) == 0)
		ucx_put(p, ref);
}

const struct peer_ops peer_ucx_ops = {
	.open = ucx_open,
	.close = ucx_close,
	.get = ucx_get,
	.put = ucx_put,
	.progress = ucx_progress,
};

#else /* !MRC_BENCH_UCX */

static int ucx_unavailable(struct bench_peer *p)
{
	snprintf(p->why, sizeof(p->why),
		 "built without libucx-dev (pkg-config ucx-ucs)");
	return -ENOTSUP;
}

const struct peer_ops peer_ucx_ops = {
	.open = ucx_unavailable,
};

#endif
