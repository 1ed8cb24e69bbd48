/* SPDX-License-Identifier: MIT */
/*
 * bpf-io.c - for library-io.sh: a program that creates a cache with the
 * bpf monitor (libbpf reads the kernel's BTF while loading it: large reads
 * that are the library's, not the program's) and then makes 4 reads of
 * 64 KiB of its own.  Exit 77 when the bpf monitor cannot start here.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mrcache.h"

#define LEN (64 * 1024)

static int nop_reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
		   uint64_t *key)
{
	*handle = addr;
	*key = 0;
	return 0;
}

static int nop_dereg(void *arg, void *handle)
{
	return 0;
}

static const struct mrcache_backend_ops ops = { .reg = nop_reg, .dereg = nop_dereg };

int main(void)
{
	static char buf[LEN];
	struct mrcache_config cfg;
	struct mrcache *c;
	int fd = memfd_create("bpf-io", 0), rc;

	if (fd < 0 || ftruncate(fd, LEN) < 0)
		return 1;
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_CALLBACKS;
	cfg.ops = &ops;
	cfg.monitor = MRCACHE_MONITOR_BPF;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	rc = mrcache_create(&cfg, &c);
	if (rc) {
		fprintf(stderr, "bpf-io: monitor bpf: %s\n", strerror(-rc));
		return 77;
	}
	for (int i = 0; i < 4; i++)
		if (pread(fd, buf, LEN, 0) != LEN)
			return 1;
	mrcache_destroy(c);
	return 0;
}
