/* SPDX-License-Identifier: MIT */
/*
 * backend-flags: registration options beyond the four access bits, as part
 * of the cache key.  The provider's reg_ex takes two flags: RELAXED (like
 * IBV_ACCESS_RELAXED_ORDERING: a request with it and one without must not
 * share a registration) and PREFETCH, a hint (backend_flags_shared):
 * requests differing only in it share one.  With the verbs backend the
 * same call passes IBV_ACCESS_RELAXED_ORDERING to ibv_reg_mr
 * (MRCACHE_VERBS_FLAGS lists what it takes).
 * Exit 0, 1 on failure.
 */
#include <errno.h>
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define PROV_RELAXED	(1ull << 0)
#define PROV_PREFETCH	(1ull << 1)

static unsigned regs;

static int prov_reg(void *arg, void *addr, size_t len, unsigned access, uint64_t flags,
		    void **handle, uint64_t *key, void **user)
{
	*handle = addr;
	*key = ++regs;
	printf("  reg %p +%zu%s%s -> key %llu\n", addr, len,
	       flags & PROV_RELAXED ? " relaxed" : "", flags & PROV_PREFETCH ? " prefetch" : "",
	       (unsigned long long)*key);
	return 0;
}

static int prov_dereg(void *arg, void *handle)
{
	return 0;
}

static int use(struct mrcache *cache, void *buf, uint64_t flags, uint64_t *key)
{
	struct mrcache_get_attr attr = { .backend_flags = flags };
	struct mrcache_region *r;
	int rc = mrcache_get_ex(cache, buf, 4096, MRCACHE_ACCESS_LOCAL_WRITE, &attr, &r);

	if (rc)
		return rc;
	*key = mrcache_region_key(r);
	return mrcache_put(cache, r);
}

int main(void)
{
	static const struct mrcache_backend_ops ops = { .dereg = prov_dereg };
	struct mrcache_config cfg;
	struct mrcache *cache;
	char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t strict, relaxed, relaxed2, hinted;
	int rc;

	if (buf == MAP_FAILED)
		return 1;
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.reg_ex = prov_reg;
	cfg.backend_flags = PROV_RELAXED | PROV_PREFETCH;
	cfg.backend_flags_shared = PROV_PREFETCH;
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "backend-flags: mrcache_create: %s\n", strerror(-rc));
		return 1;
	}
	printf("relaxed twice: one registration\n");
	if (use(cache, buf, PROV_RELAXED, &relaxed) || use(cache, buf, PROV_RELAXED, &relaxed2))
		return 1;
	printf("strict: a registration of its own\n");
	if (use(cache, buf, 0, &strict))
		return 1;
	printf("relaxed with a prefetch hint: shares the relaxed one\n");
	if (use(cache, buf, PROV_RELAXED | PROV_PREFETCH, &hinted))
		return 1;
	printf("a flag the provider does not take: %s\n",
	       strerror(-use(cache, buf, 1ull << 5, &hinted)));
	mrcache_destroy(cache);
	return relaxed == relaxed2 && strict != relaxed && hinted == relaxed ? 0 : 1;
}
