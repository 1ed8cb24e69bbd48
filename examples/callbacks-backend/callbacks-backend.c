/* SPDX-License-Identifier: MIT */
/*
 * callbacks-backend: a communication library's own registration behind
 * mrcache, as a provider would plug in its NIC's calls.  reg() and dereg()
 * here only count and hand out keys; on_invalidate() reports, in the next
 * cache call, the regions an munmap() dropped and why.
 * Exit 0, 1 on failure.
 */
#include <mrcache.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

struct nic {
	unsigned live;		/* registrations held */
	uint64_t next_key;
	unsigned invalidated;
};

static int nic_reg(void *arg, void *addr, size_t len, unsigned access,
		   void **handle, uint64_t *key)
{
	struct nic *nic = arg;

	*handle = addr;		/* a real backend returns its registration */
	*key = ++nic->next_key;
	nic->live++;
	printf("  reg   %p +%zu -> key %llu\n", addr, len, (unsigned long long)*key);
	return 0;
}

static int nic_dereg(void *arg, void *handle)
{
	struct nic *nic = arg;

	nic->live--;
	printf("  dereg %p\n", handle);
	return 0;
}

static void on_invalidate(void *arg, uintptr_t start, uintptr_t end, enum mrcache_cause cause)
{
	struct nic *nic = arg;

	nic->invalidated++;
	printf("  invalidated [%#lx, %#lx): %s\n", (unsigned long)start, (unsigned long)end,
	       mrcache_cause_name(cause));
}

static int send_from(struct mrcache *cache, void *buf, size_t len)
{
	struct mrcache_region *r;
	int rc = mrcache_get(cache, buf, len, MRCACHE_ACCESS_LOCAL_WRITE, &r);

	if (rc)
		return rc;
	printf("  send %p +%zu with key %llu\n", buf, len,
	       (unsigned long long)mrcache_region_key(r));
	return mrcache_put(cache, r);
}

int main(void)
{
	static const struct mrcache_backend_ops ops = { .reg = nic_reg, .dereg = nic_dereg };
	struct nic nic = { 0 };
	struct mrcache_config cfg;
	struct mrcache *cache;
	size_t len = 64 * 1024;
	char *buf;
	int rc;

	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.ops_arg = &nic;
	cfg.on_invalidate = on_invalidate;
	cfg.cb_arg = &nic;
	rc = mrcache_create(&cfg, &cache);
	if (rc) {
		fprintf(stderr, "callbacks-backend: mrcache_create: %s\n", strerror(-rc));
		return 1;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	printf("two sends from one buffer: one registration\n");
	if (send_from(cache, buf, len) || send_from(cache, buf + 4096, 4096))
		return 1;
	printf("munmap, then the next cache call reclaims the registration\n");
	munmap(buf, len);
	mrcache_progress(cache);
	mrcache_destroy(cache);
	printf("%u registrations left, %u invalidated\n", nic.live, nic.invalidated);
	return nic.live == 0 && nic.invalidated == 1 && nic.next_key == 1 ? 0 : 1;
}
