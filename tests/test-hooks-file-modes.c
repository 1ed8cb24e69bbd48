/* SPDX-License-Identifier: MIT */
/*
 * hooks/file.c's reading of fallocate() modes, on a regular file (the
 * filesystem of $TMPDIR, else /tmp: ext4 on the CI host), where the io_uring
 * oracle of test-guarantee-file cannot pin pages: a registration of the
 * page at file offset 8 KiB of a shared mapping, then one fallocate().
 *   punch, zero         [8 KiB, 12 KiB): the page is dropped
 *   collapse, insert    at 4 KiB: the page moves (everything after 4 KiB)
 *   punch-before        [0, 4 KiB): another page, the registration stays
 *   allocate            mode 0 past the end: nothing dropped, it stays
 * The hooks monitor must invalidate the first four (the next get makes a
 * new registration) and keep the other two (it hits).  Negative control:
 * under `none` every get after the call hits, so a "dropped" case that
 * hits is caught.  A mode the filesystem refuses skips its case.
 *
 * Then, where this process may make a mount namespace (root), a child
 * hides /proc and runs the "dropped" cases again under hooks: without
 * /proc/self/maps the file's mappings are unknown, and every registration
 * must go (the kept cases may then miss too).  Control: the same child
 * under `none` hits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>
#include <linux/falloc.h>
#include "testbackend.h"
#include "testutil.h"

#define PAGES 4

struct mode_case {
	const char *name;
	int mode;
	unsigned off, len;	/* in pages */
	int drops;		/* the registered page (page 2) */
};

static const struct mode_case cases[] = {
	{ "punch", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 2, 1, 1 },
	{ "zero", FALLOC_FL_ZERO_RANGE, 2, 1, 1 },
	{ "collapse", FALLOC_FL_COLLAPSE_RANGE, 1, 1, 1 },
	{ "insert", FALLOC_FL_INSERT_RANGE, 1, 1, 1 },
	{ "punch-before", FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 1, 0 },
	{ "allocate", 0, PAGES, 1, 0 },
};

static int scratch_file(size_t page)
{
	const char *dir = getenv("TMPDIR");
	char path[4096], buf[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/mrc-file-modes-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	unlink(path);
	memset(buf, 0x5a, sizeof(buf));
	for (size_t done = 0; done < PAGES * page; done += sizeof(buf))
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -EIO;
		}
	return fd;
}

static int get_put(struct mrcache *c, void *addr, size_t len)
{
	struct mrcache_region *r;
	int rc = mrcache_get(c, addr, len, 0, &r);

	return rc ? rc : mrcache_put(c, r);
}

/* 1 when the get after the call made a new registration, 0 when it hit,
 * 77 when the filesystem refuses the mode, -errno on a setup failure. */
static int run(const struct mode_case *k, enum mrcache_monitor_kind m)
{
	size_t page = (size_t)getpagesize();
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	uint64_t regs;
	char *p, *target;
	int fd = scratch_file(page), rc, v = 0;

	if (fd < 0)
		return fd;
	p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return -errno;
	}
	target = p + 2 * page;
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, m);
	rc = mrcache_create(&cfg, &c);
	if (rc)
		goto out_map;
	CHECK_EQ(get_put(c, target, page), 0);
	CHECK_EQ(get_put(c, target, page), 0);
	CHECK_EQ(tb.regs, 1);	/* a miss, then a hit */
	regs = tb.regs;
	if (fallocate(fd, k->mode, (off_t)(k->off * page), (off_t)(k->len * page))) {
		rc = errno == EOPNOTSUPP || errno == EINVAL ? 77 : -errno;
		goto out_cache;
	}
	CHECK_EQ(get_put(c, target, page), 0);
	v = tb.regs != regs;
out_cache:
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
out_map:
	munmap(p, PAGES * page);
	close(fd);
	return rc ? rc : v;
}

/* In a child, /proc hidden: 0 when every "dropped" case missed under
 * hooks and hit under `none`, 1 if not, 77 when it cannot hide /proc. */
static int no_proc_child(void)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("none", "/proc", "tmpfs", 0, NULL))
		return 77;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int none, hooks;

		if (!cases[i].drops)
			continue;
		none = run(&cases[i], MRCACHE_MONITOR_NONE);
		hooks = run(&cases[i], MRCACHE_MONITOR_HOOKS);
		if (none == 77)
			continue;
		printf("  %-13s no /proc: none %s, hooks %s (must hit, must miss)\n",
		       cases[i].name, none ? "miss" : "hit", hooks ? "miss" : "hit");
		CHECK_EQ(none, 0);
		CHECK_EQ(hooks, 1);
	}
	return test_result();
}

static void no_proc(void)
{
	pid_t pid;
	int rc;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		rc = no_proc_child();
		fflush(stdout);
		_exit(rc);
	}
	CHECK(pid > 0);
	rc = pid > 0 ? test_wait_child(pid, 60) : 1;
	if (rc == 77)
		printf("  no /proc: SKIP (cannot make a mount namespace here)\n");
	else
		CHECK_EQ(rc, 0);
}

int main(void)
{
	static const enum mrcache_monitor_kind mons[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS,
	};
	int ran = 0, fd = scratch_file((size_t)getpagesize());

	if (fd < 0)
		SKIP("no file to map in $TMPDIR or /tmp: %s", strerror(-fd));
	close(fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mode_case *k = &cases[i];

		for (size_t j = 0; j < sizeof(mons) / sizeof(mons[0]); j++) {
			int none = mons[j] == MRCACHE_MONITOR_NONE, v = run(k, mons[j]);
			const char *name = mrcache_monitor_name(mons[j]);

			if (v == 77) {
				printf("  %-13s %-6s SKIP (the filesystem refuses the mode)\n",
				       k->name, name);
				break;
			}
			if (v == -ENOTSUP && !none)
				SKIP("monitor hooks cannot start here");
			if (v < 0) {
				printf("  %-13s %-6s ERROR %s\n", k->name, name, strerror(-v));
				CHECK(v >= 0);
				continue;
			}
			/* `none` must hit: the control that a miss means something. */
			printf("  %-13s %-6s %s (%s)\n", k->name, name, v ? "miss" : "hit",
			       none ? "negative control: must hit"
				    : k->drops ? "page dropped: must miss" : "page kept: must hit");
			CHECK_EQ(v, none ? 0 : k->drops);
			ran += !none && k->drops;
		}
	}
	if (!ran)
		SKIP("the filesystem refuses every mode that drops pages");
	no_proc();
	return test_result();
}
