/* SPDX-License-Identifier: MIT */
/*
 * uffd where userfaultfd cannot work:
 *  - a mapping it cannot register (a shared mapping of a regular file, a
 *    System V segment) or one another userfaultfd owns: the cache still
 *    works, the range is watched by libmrcache's interposed calls only
 *    (docs/monitors.md): munmap() makes the next get miss, a raw
 *    syscall(SYS_munmap) does not (the documented limit);
 *  - no userfaultfd at all (here: a seccomp filter makes the syscall
 *    fail with ENOSYS in a child): mrcache_create() fails with that errno
 *    and says why.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define LEN (64ul << 10)

static int get_missed(struct mrcache *c, void *p)
{
	struct mrcache_stats a, b;
	struct mrcache_region *r;
	int rc;

	mrcache_stats_get(c, &a);
	rc = mrcache_get(c, p, LEN, 0, &r);
	if (rc)
		return rc;
	mrcache_put(c, r);
	mrcache_stats_get(c, &b);
	return b.misses > a.misses;
}

/* A fresh shared mapping of a regular (non-tmpfs) file, or NULL. */
static void *map_file(void *at)
{
	char path[] = "mrcache-uffd-XXXXXX";
	struct statfs sf;
	int fd = mkstemp(path);
	void *p = MAP_FAILED;

	if (fd < 0)
		return NULL;
	unlink(path);
	if (fstatfs(fd, &sf) == 0 && sf.f_type != TMPFS_MAGIC && ftruncate(fd, LEN) == 0)
		p = mmap(at, LEN, PROT_READ | PROT_WRITE,
			 MAP_SHARED | (at ? MAP_FIXED_NOREPLACE : 0), fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static void *map_sysv(void *at)
{
	int id = shmget(IPC_PRIVATE, LEN, IPC_CREAT | 0600);
	void *p;

	if (id < 0)
		return NULL;
	p = shmat(id, at, 0);
	shmctl(id, IPC_RMID, NULL);
	return p == (void *)-1 ? NULL : p;
}

static int foreign_uffd = -1;

/* Anonymous memory registered with a userfaultfd of the application's. */
static void *map_foreign(void *at)
{
	struct uffdio_api api = { .api = UFFD_API };
	void *p = mmap(at, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		       (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	struct uffdio_register reg = {
		.range = { (uintptr_t)p, LEN }, .mode = UFFDIO_REGISTER_MODE_WP,
	};

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 1, LEN);
	if (foreign_uffd < 0) {
		foreign_uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* USER_MODE_ONLY */);
		if (foreign_uffd < 0 || ioctl(foreign_uffd, UFFDIO_API, &api))
			return NULL;
	}
	if (ioctl(foreign_uffd, UFFDIO_REGISTER, &reg))
		return NULL;
	return p;
}

struct kind {
	const char *name;
	void *(*map)(void *at);
	int (*unmap)(void *p);
};

static int unmap_plain(void *p)
{
	return munmap(p, LEN);
}

static int unmap_sysv(void *p)
{
	return shmdt(p);
}

static const struct kind kinds[] = {
	{ "file-shared", map_file, unmap_plain },
	{ "sysv-shm", map_sysv, unmap_sysv },
	{ "other-uffd", map_foreign, unmap_plain },
};

static void fallback(struct mrcache *c, const struct kind *k)
{
	void *p = k->map(NULL);

	if (!p) {
		printf("%-12s cannot be set up here: not checked\n", k->name);
		return;
	}
	CHECK_EQ(get_missed(c, p), 1);
	CHECK_EQ(get_missed(c, p), 0);
	CHECK_EQ(k->unmap(p), 0);
	CHECK(k->map(p) == p);
	if (get_missed(c, p) != 1) {		/* the interposed call saw it */
		fprintf(stderr, "%s: the get after %s hit\n", k->name,
			k->unmap == unmap_sysv ? "shmdt()" : "munmap()");
		test_failures++;
	}
	CHECK_EQ(syscall(SYS_munmap, p, LEN), 0);
	CHECK(k->map(p) == p);
	CHECK_EQ(get_missed(c, p), 0);		/* the raw one is not seen */
	printf("%-12s cached; %s seen, raw munmap not (documented)\n", k->name,
	       k->unmap == unmap_sysv ? "shmdt()" : "munmap()");
	CHECK_EQ(mrcache_invalidate(c, p, LEN), 1);	/* drop the stale one */
	syscall(SYS_munmap, p, LEN);
}

static int no_userfaultfd_child(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_userfaultfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;

	test_failures = 0;	/* the parent's count came along */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return 77;
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_UFFD);
	CHECK_EQ(mrcache_create(&cfg, &c), -ENOSYS);
	return test_result();
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	int status;
	pid_t pid;

	c = test_backend_cache_or_skip(&tb, &cfg, MRCACHE_MONITOR_UFFD);
	alarm(60);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		fallback(c, &kinds[i]);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(no_userfaultfd_child());
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("no userfaultfd: seccomp unavailable, not checked\n");
	} else {
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		printf("no userfaultfd: mrcache_create() fails with ENOSYS\n");
	}
	return test_result();
}
