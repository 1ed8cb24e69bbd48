/* SPDX-License-Identifier: MIT */
/*
 * mrmon_priv.h - what the module's robustness tests need beside
 * mrmon_test.h: the module's reference count, a monotonic clock, becoming an
 * unprivileged user with chosen limits, reading the kernel log from a
 * mark, and a memory cgroup of one's own.
 * Functions return 0 or -errno unless they return a value.
 */
#ifndef MRMON_PRIV_H
#define MRMON_PRIV_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline double priv_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* /sys/module/mrmon/refcnt; LONG_MIN if the module is not loaded (the
 * count itself can read negative after an unbalanced module_put). */
static inline long priv_module_refs(void)
{
	FILE *f = fopen("/sys/module/mrmon/refcnt", "r");
	long v = -1;

	if (!f)
		return LONG_MIN;
	if (fscanf(f, "%ld", &v) != 1)
		v = LONG_MIN;
	fclose(f);
	return v;
}

#define PRIV_NOBODY 65534

static inline int priv_rlimit(int resource, rlim_t value)
{
	struct rlimit rl = { value, value };

	return setrlimit(resource, &rl) ? -errno : 0;
}

/* Drops to uid and gid `id` with no supplementary groups and so no
 * capabilities (CAP_IPC_LOCK included).  Set the limits first: lowering a
 * hard limit needs no privilege, raising one does. */
static inline int priv_become(uid_t id)
{
	if (setgroups(0, NULL) || setgid(id) || setuid(id))
		return -errno;
	return 0;
}

static inline int priv_write(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

/*
 * The kernel log from now on: a /dev/kmsg descriptor positioned at the
 * end.  priv_kmsg_grep() then counts the records logged since that
 * contain any of the NULL-terminated `needles`, printing them.
 */
static inline int priv_kmsg_mark(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static inline int priv_kmsg_grep(int fd, const char *const *needles)
{
	char rec[8192];
	int found = 0;
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n < 0)
			continue;	/* overwritten records: read on */
		rec[n] = 0;
		for (const char *const *k = needles; *k; k++)
			if (strstr(rec, *k)) {
				printf("kernel log: %s", rec);
				found++;
				break;
			}
	}
	return found;
}

static inline long priv_read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * A cgroup v2 directory with the memory controller enabled, named `name`
 * under the hierarchy's root (mounted at /tmp/mrmon-cgroup2 if
 * /sys/fs/cgroup is not cgroup2), in `dir`; 0 or -errno.
 */
static inline int priv_memcg_make(const char *name, char *dir, size_t size)
{
	static const char *const roots[] = { "/sys/fs/cgroup", "/tmp/mrmon-cgroup2" };
	const char *root = NULL;
	char path[512];
	struct stat st;

	for (int i = 0; i < 2 && !root; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", roots[i]);
		if (!stat(path, &st))
			root = roots[i];
	}
	if (!root) {
		root = roots[1];
		mkdir(root, 0755);
		if (mount("none", root, "cgroup2", 0, NULL))
			return -errno;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (priv_write(path, "+memory\n"))
		return -ENOTSUP;
	snprintf(dir, size, "%s/%s", root, name);
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/memory.current", dir);
	return stat(path, &st) ? -ENOTSUP : 0;
}

/* Moves the calling process into the cgroup `dir`. */
static inline int priv_memcg_enter(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return priv_write(path, "0\n");
}

/* Writes `value` to the file `name` of the cgroup `dir`. */
static inline int priv_write_in(const char *dir, const char *name, const char *value)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return priv_write(path, value);
}

/* memory.current of `dir`, in bytes, or -1. */
static inline long priv_memcg_current(const char *dir)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/memory.current", dir);
	return priv_read_long(path);
}

#endif
