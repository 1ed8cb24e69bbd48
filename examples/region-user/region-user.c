/* SPDX-License-Identifier: MIT */
/*
 * region-user: a provider's own data in the cache's regions, and the
 * invalidation that names them.  The provider registers through its own
 * reg_ex, which allocates a `struct prov_mr` per registration (the rkey it
 * advertised, the peer that holds it) and stores it as the region's user
 * pointer; a get can also hand one in (here: the peer).  When munmap()
 * drops a registration, on_region_invalidate receives the region: its key,
 * handle and that pointer, so the provider can revoke the rkey at its peer
 * without keeping a range-to-key map beside the cache.
 * Exit 0, 1 on failure.
 */
#include <errno.h>
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct peer {
	const char *name;
	unsigned revoked;	/* rkeys we told it to forget */
};

struct prov_mr {		/* what the provider keeps per registration */
	uint32_t rkey;
	struct peer *peer;	/* who was given the rkey */
};

struct prov {
	uint32_t next_rkey;
	unsigned live;
};

/* reg_ex: *user holds the get's pointer (the peer); replace it with the
 * provider's per-registration struct, which remembers the peer. */
static int prov_reg(void *arg, void *addr, size_t len, unsigned access, uint64_t flags,
		    void **handle, uint64_t *key, void **user)
{
	struct prov *p = arg;
	struct prov_mr *mr = malloc(sizeof(*mr));

	if (!mr)
		return -ENOMEM;
	mr->rkey = ++p->next_rkey;
	mr->peer = *user;
	*handle = mr;
	*key = mr->rkey;
	*user = mr;
	p->live++;
	return 0;
}

static int prov_dereg(void *arg, void *handle)
{
	struct prov *p = arg;

	free(handle);		/* the struct prov_mr reg_ex made */
	p->live--;
	return 0;
}

/* The registration is still valid during the call: revoke it remotely. */
static void on_region_invalidate(void *arg, const struct mrcache_region *r,
				 enum mrcache_cause cause)
{
	struct prov_mr *mr = mrcache_region_user(r);

	printf("  %s: [%p, +%zu) key %llu: tell %s to forget rkey %u\n",
	       mrcache_cause_name(cause), mrcache_region_addr(r), mrcache_region_length(r),
	       (unsigned long long)mrcache_region_key(r), mr->peer ? mr->peer->name : "nobody",
	       mr->rkey);
	if (mr->peer)
		mr->peer->revoked++;
}

static int send_to(struct mrcache *cache, struct peer *peer, void *buf, size_t len)
{
	struct mrcache_get_attr attr = { .user = peer };
	struct mrcache_region *r;
	struct prov_mr *mr;
	int rc = mrcache_get_ex(cache, buf, len, MRCACHE_ACCESS_REMOTE_READ, &attr, &r);

	if (rc)
		return rc;
	mr = mrcache_region_user(r);
	printf("  %s may read %p +%zu with rkey %u\n", peer->name, buf, len, mr->rkey);
	return mrcache_put(cache, r);
}

int main(void)
{
	static const struct mrcache_backend_ops ops = { .dereg = prov_dereg };
	struct prov prov = { 0 };
	struct peer bob = { .name = "bob" };
	struct mrcache_config cfg;
	struct mrcache *cache;
	size_t len = 64 * 1024;
	char *buf;
	int rc;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;			/* dereg; reg_ex registers */
	cfg.reg_ex = prov_reg;
	cfg.ops_arg = &prov;
	cfg.on_region_invalidate = on_region_invalidate;
	cfg.cb_arg = &prov;
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "region-user: mrcache_create: %s\n", strerror(-rc));
		return 1;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	if (send_to(cache, &bob, buf, len) || send_to(cache, &bob, buf, 4096))
		return 1;
	printf("munmap: the next cache call revokes the rkey\n");
	munmap(buf, len);
	mrcache_progress(cache);
	mrcache_destroy(cache);
	printf("%u registrations left, bob revoked %u\n", prov.live, bob.revoked);
	return prov.live == 0 && bob.revoked == 1 && prov.next_rkey == 1 ? 0 : 1;
}
