/* SPDX-License-Identifier: MIT */
/*
 * fork with the bpf monitor: a child must not keep the parent's programs
 * attached.  It inherits the descriptors of the links, programs and maps;
 * a link stays attached while any process holds it, so every system call
 * of every process kept paying the syscall variant's filter for as long as
 * a forked worker lived, after the parent's mrcache_destroy, and each
 * create/fork/destroy cycle added a program set.
 *
 * The parent notes the ids of its links (/proc/self/fdinfo), forks a child
 * that lists its own descriptors and mappings and then waits, destroys its
 * cache, and checks that no link of those ids exists any more and that the
 * child holds no bpf descriptor.  Control: before the destroy the parent's
 * links are found by id.  Skips where the bpf monitor does not start.
 */
#include <dirent.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define MAX_LINKS 32

/* This process's bpf descriptors; the ids of its links into ids[]. */
static int bpf_fds(unsigned *ids, int max_ids, int *nids)
{
	char path[300], target[256], info[1024];
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	int n = 0;

	*nids = 0;
	while (dir && (d = readdir(dir))) {
		ssize_t len;
		char *id;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strncmp(target, "anon_inode:bpf", 14))
			continue;
		n++;
		if (strcmp(target, "anon_inode:bpf_link") || *nids >= max_ids)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = fopen(path, "r");
		len = f ? (ssize_t)fread(info, 1, sizeof(info) - 1, f) : 0;
		if (f)
			fclose(f);
		info[len > 0 ? len : 0] = 0;
		id = strstr(info, "link_id:");
		if (id)
			ids[(*nids)++] = (unsigned)strtoul(id + 8, NULL, 10);
	}
	if (dir)
		closedir(dir);
	return n;
}

/* Mappings of bpf maps (views of the index, the ring, the globals). */
static int bpf_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += strstr(line, "anon_inode:bpf") != NULL;
	if (f)
		fclose(f);
	return n;
}

static int link_exists(unsigned id)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.link_id = id;
	fd = (int)syscall(SYS_bpf, BPF_LINK_GET_FD_BY_ID, &attr, sizeof(attr));
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 1 : errno == ENOENT ? 0 : -errno;
}

/* The child: report what it holds, then wait until told to go. */
static void child(int report_fd, int go_fd)
{
	int counts[2], nids;
	unsigned ids[MAX_LINKS];
	char c;

	counts[0] = bpf_fds(ids, MAX_LINKS, &nids);
	counts[1] = bpf_mappings();
	if (write(report_fd, counts, sizeof(counts)) != sizeof(counts))
		_exit(2);
	_exit(read(go_fd, &c, 1) >= 0 ? 0 : 2);
}

int main(void)
{
	struct test_backend tb;
	struct mrcache_config cfg;
	struct mrcache *c;
	unsigned ids[MAX_LINKS];
	int report[2], go[2], counts[2] = { -1, -1 };
	int nids, status = 0, rc;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, MRCACHE_MONITOR_BPF);
	rc = mrcache_create(&cfg, &c);
	if (rc)
		SKIP("the bpf monitor does not start here (%s)", strerror(-rc));
	bpf_fds(ids, MAX_LINKS, &nids);
	/* The control: the parent's links are there and found by id. */
	CHECK(nids > 0);
	for (int i = 0; i < nids; i++)
		CHECK_EQ(link_exists(ids[i]), 1);
	printf("parent: %d links attached (control)\n", nids);

	CHECK(pipe(report) == 0 && pipe(go) == 0);
	pid = fork();
	if (pid == 0) {
		close(report[0]);
		close(go[1]);
		child(report[1], go[0]);
	}
	CHECK(pid > 0);
	close(report[1]);
	close(go[0]);
	CHECK_EQ(read(report[0], counts, sizeof(counts)), sizeof(counts));
	CHECK_EQ(mrcache_destroy(c), 0);
	for (int i = 0; i < nids; i++)
		if (link_exists(ids[i]) != 0) {
			fprintf(stderr, "link %u still exists after the parent's destroy, "
				"with a forked child alive\n", ids[i]);
			test_failures++;
		}
	printf("child: %d bpf descriptors, %d mappings of bpf maps\n", counts[0], counts[1]);
	CHECK_EQ(counts[0], 0);
	CHECK_EQ(counts[1], 0);
	close(go[1]);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	return test_result();
}
