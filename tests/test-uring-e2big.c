/* SPDX-License-Identifier: MIT */
/*
 * A get over io_uring's 1 GiB per buffer is -E2BIG, as mrcache.h says,
 * under every monitor that starts here, mapped or not: the length is
 * checked before the monitor watches the range, so a monitor's refusal
 * (uffd: -EFAULT for a range not all mapped, as issue 28 saw for a >1 GiB
 * get) cannot hide it.
 * One byte over (GiB + 1, two pages once rounded) is -E2BIG too.
 * Control: a 1 MiB get of the same mapping registers.
 */
#include <errno.h>
#include <liburing.h>
#include <string.h>
#include <sys/mman.h>
#include "mrcache.h"
#include "testutil.h"

#define GIB (1ul << 30)

int main(void)
{
	static const enum mrcache_monitor_kind mons[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_UFFD, MRCACHE_MONITOR_HOOKS,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
	};
	struct io_uring ring;
	struct mrcache_config cfg;
	struct mrcache_region *r;
	struct mrcache *c;
	int ran = 0, rc;
	char *big = mmap(NULL, 2 * GIB, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (big == MAP_FAILED)
		SKIP("no 2 GiB of address space");
	munmap(big + 2 * GIB - 4096, 4096);	/* a range not all mapped */
	for (size_t i = 0; i < sizeof(mons) / sizeof(mons[0]); i++) {
		if (io_uring_queue_init(4, &ring, 0))
			SKIP("no io_uring here");
		mrcache_config_init(&cfg);
		cfg.backend = MRCACHE_BACKEND_URING;
		cfg.ring = &ring;
		cfg.uring_slots = 4;
		cfg.monitor = mons[i];
		cfg.flags = MRCACHE_FLAG_NO_ENV;
		if (mrcache_create(&cfg, &c) == 0) {
			ran++;
			rc = mrcache_get(c, big, 2 * GIB, MRCACHE_ACCESS_LOCAL_WRITE, &r);
			if (rc != -E2BIG)
				fprintf(stderr, "monitor %s: %s\n", mrcache_monitor_name(mons[i]),
					strerror(-rc));
			CHECK_EQ(rc, -E2BIG);
			CHECK_EQ(mrcache_get(c, big + 4096, GIB + 1, 0, &r), -E2BIG);
			CHECK_EQ(mrcache_get(c, big + GIB, GIB + 4096, 0, &r), -E2BIG);
			CHECK_EQ(mrcache_get(c, big, 1ul << 20, 0, &r), 0);
			if (!test_failures)
				CHECK_EQ(mrcache_put(c, r), 0);
			CHECK_EQ(mrcache_destroy(c), 0);
		}
		io_uring_queue_exit(&ring);
	}
	printf("%d monitors checked\n", ran);
	return test_result();
}
