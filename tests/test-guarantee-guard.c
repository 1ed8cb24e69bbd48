/* SPDX-License-Identifier: MIT */
/*
 * Monitor guarantee: madvise(MADV_GUARD_INSTALL) (Linux 6.13+) zaps a
 * cached range's pages to put guard entries in their place, and
 * MADV_GUARD_REMOVE then leaves fresh zero pages at the same addresses: a
 * later get must miss.  Through libc's madvise (hooks, and uffd through
 * the interposed call: the kernel sends userfaultfd no event for guards)
 * and, under bpf, through a raw system call too (test-bpf-raw-munmap).
 * A kernel without guard entries skips (EINVAL).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include "guarantee.h"

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#define MADV_GUARD_REMOVE 103
#endif

static int guard_cycle(struct guarantee_ctx *c, void *addr, size_t len)
{
	if (madvise(addr, len, MADV_GUARD_INSTALL)) {
		if (errno != EINVAL)
			return -errno;
		snprintf(c->why, sizeof(c->why), "no MADV_GUARD_INSTALL here (Linux 6.13+)");
		return GUARANTEE_SKIP;
	}
	return madvise(addr, len, MADV_GUARD_REMOVE) ? -errno : 0;
}

static int apply_guard(struct guarantee_ctx *c)
{
	return guard_cycle(c, c->addr, c->len);
}

static int apply_guard_page(struct guarantee_ctx *c)
{
	return guard_cycle(c, (char *)c->addr + 5 * 4096, 4096);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "madv-guard", guarantee_prepare_private, apply_guard,
		  guarantee_release_maps, NULL },
		{ "madv-guard-page", guarantee_prepare_private, apply_guard_page,
		  guarantee_release_maps, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
