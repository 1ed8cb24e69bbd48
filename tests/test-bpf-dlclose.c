/* SPDX-License-Identifier: MIT */
/* A buffer inside a shared object, unmapped by the dynamic loader on
 * dlclose(): the loader's own munmap goes around interposed libc calls, so
 * only a kernel-side monitor sees it. */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"

#define LEN (64 * 1024)

static char lib_path[PATH_MAX];

static int find_lib(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = 0;
	snprintf(lib_path, sizeof(lib_path), "%s/libmrc-bpf-dlclose.so", dirname(exe));
	return access(lib_path, R_OK) ? -errno : 0;
}

static int prepare(struct guarantee_ctx *c)
{
	void *h = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(c->why, sizeof(c->why), "dlopen: %s", dlerror());
		return GUARANTEE_SKIP;
	}
	c->addr = dlsym(h, "mrc_dl_buffer");
	c->len = LEN;
	c->aux = h;
	if (!c->addr) {
		dlclose(h);
		return -ENOENT;
	}
	return 0;
}

static int apply(struct guarantee_ctx *c)
{
	dlclose(c->aux);
	c->aux = NULL;
	if (!guarantee_map(c->addr, c->len, 0)) {
		snprintf(c->why, sizeof(c->why), "dlclose did not unmap the library");
		return GUARANTEE_SKIP;
	}
	return 0;
}

static void release(struct guarantee_ctx *c)
{
	if (c->aux)
		dlclose(c->aux);
	else
		munmap(c->addr, c->len);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "dlclose", prepare, apply, release, NULL },
	};
	int err = find_lib();

	if (err) {
		printf("SKIP: %s not found: %s\n", lib_path, strerror(-err));
		return 77;
	}
	bpf_test_pick_monitor();
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
