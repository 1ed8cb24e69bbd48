/* SPDX-License-Identifier: MIT */
/* munmap by a raw system call, bypassing libc: interposing monitors never
 * see it; the kernel-side ones must. */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"

#define LEN (64 * 1024)

static int prepare(struct guarantee_ctx *c)
{
	c->len = LEN;
	c->addr = guarantee_map(NULL, LEN, 0);
	return c->addr ? 0 : -errno;
}

static int apply_whole(struct guarantee_ctx *c)
{
	if (syscall(SYS_munmap, c->addr, c->len))
		return -errno;
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static int apply_raw_madvise(struct guarantee_ctx *c)
{
	return syscall(SYS_madvise, c->addr, c->len, MADV_DONTNEED) ? -errno : 0;
}

static void release(struct guarantee_ctx *c)
{
	munmap(c->addr, c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "raw-munmap", prepare, apply_whole, release, NULL },
		{ "raw-madv-dontneed", prepare, apply_raw_madvise, release, NULL },
	};

	bpf_test_pick_monitor();
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
