/* SPDX-License-Identifier: MIT */
/*
 * The verbs backend on a real device (Soft-RoCE in the guest; skips on a
 * host without one):
 *  - every access mask registers; the region exposes the struct ibv_mr,
 *    its lkey as the key and its rkey; remote write or atomic access
 *    brings local write along (verbs refuses them without it);
 *  - bad input gives -EINVAL; an unmapped range gives -EFAULT, which is
 *    not a resource error: the cache passes it through without evicting.
 *    Control: the same address registers once it is mapped.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "backend/backend.h"
#include "verbs-test.h"

#define LEN (64 * 1024)

#ifdef MRC_HAVE_VERBS
static void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		SKIP("mmap failed");
	memset(p, 0x5a, len);
	return p;
}

/* Backend level: each access mask, the keys, the error paths. */
static void test_backend(struct mrcache_config *cfg, char *buf)
{
	struct mrc_backend *be;
	struct mrc_reg reg;
	char *gone;

	CHECK_EQ(mrc_backend_open(cfg, &be), 0);
	for (unsigned access = 0; access <= MRCACHE_ACCESS_ALL; access++) {
		struct ibv_mr *mr;

		memset(&reg, 0, sizeof(reg));
		CHECK_EQ(be->ops->reg(be, buf, LEN, access, 0, &reg, NULL), 0);
		mr = reg.handle;
		CHECK(mr != NULL);
		if (!mr)
			continue;
		CHECK(mr->pd == cfg->pd);
		CHECK(mr->addr == buf);
		CHECK_EQ(mr->length, LEN);
		CHECK_EQ(reg.key, mr->lkey);
		CHECK_EQ(reg.rkey, mr->rkey);
		CHECK_EQ(be->ops->dereg(be, &reg), 0);
		CHECK(reg.handle == NULL);
	}
	CHECK_EQ(be->ops->reg(be, buf, 0, MRCACHE_ACCESS_LOCAL_WRITE, 0, &reg, NULL), -EINVAL);
	CHECK_EQ(be->ops->reg(be, buf, LEN, MRCACHE_ACCESS_ALL + 1, 0, &reg, NULL), -EINVAL);
	reg.handle = NULL;
	CHECK_EQ(be->ops->dereg(be, &reg), -EINVAL);

	gone = map(LEN);
	munmap(gone, LEN);
	CHECK_EQ(be->ops->reg(be, gone, LEN, MRCACHE_ACCESS_REMOTE_WRITE, 0, &reg, NULL), -EFAULT);
	CHECK(!mrc_backend_resource_error(-EFAULT));
	/* Control: mapped again, the same range registers. */
	CHECK(mmap(gone, LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == gone);
	memset(gone, 1, LEN);
	CHECK_EQ(be->ops->reg(be, gone, LEN, MRCACHE_ACCESS_REMOTE_WRITE, 0, &reg, NULL), 0);
	CHECK_EQ(be->ops->dereg(be, &reg), 0);
	munmap(gone, LEN);
	be->ops->close(be);
}

/* Cache level: the region's key, rkey and handle; -EFAULT passes through. */
static void test_cache(struct mrcache_config *cfg, char *buf)
{
	struct mrcache_region *r, *r2;
	struct mrcache_stats st;
	struct mrcache *cache;
	struct ibv_mr *mr;
	char *gone;

	cfg->monitor = MRCACHE_MONITOR_NONE;
	cfg->flags = MRCACHE_FLAG_NO_ENV;
	CHECK_EQ(mrcache_create(cfg, &cache), 0);
	CHECK_EQ(mrcache_get(cache, buf + 100, 1000, MRCACHE_ACCESS_REMOTE_READ, &r), 0);
	mr = mrcache_region_handle(r);
	CHECK(mr != NULL);
	CHECK_EQ(mrcache_region_key(r), mr->lkey);
	CHECK_EQ(mrcache_region_rkey(r), mr->rkey);
	CHECK((char *)mr->addr <= buf + 100);
	CHECK((char *)mr->addr + mr->length >= buf + 1100);
	CHECK_EQ(mrcache_put(cache, r), 0);
	CHECK_EQ(mrcache_get(cache, buf + 100, 1000, MRCACHE_ACCESS_REMOTE_READ, &r2), 0);
	CHECK(r2 == r);
	CHECK_EQ(mrcache_put(cache, r2), 0);

	gone = map(LEN);
	munmap(gone, LEN);
	CHECK_EQ(mrcache_get(cache, gone, LEN, MRCACHE_ACCESS_REMOTE_WRITE, &r), -EFAULT);
	CHECK_EQ(mrcache_stats_get(cache, &st), 0);
	CHECK_EQ(st.evictions, 0);	/* not a resource error */
	CHECK_EQ(st.regions, 1);	/* the unused cached region stayed */
	CHECK_EQ(st.registration_failures, 1);
	CHECK_EQ(mrcache_destroy(cache), 0);
}

int main(void)
{
	struct mrcache_config cfg;
	struct verbs_test vt;
	char *buf;

	verbs_test_open(&vt);
	buf = map(LEN);
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_VERBS;
	cfg.pd = vt.pd;
	test_backend(&cfg, buf);
	test_cache(&cfg, buf);
	munmap(buf, LEN);
	verbs_test_close(&vt);
	return test_result();
}
#else
int main(void)
{
	VERBS_TEST_REQUIRE();
}
#endif
