/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-filemaps: the cross-user form of finding 1 of issue 24 stays
 * fixed.  Root creates a one-page, mode-0644 file on tmpfs; uid 65534
 * (default limits) maps it 1,000 times read-only (never touched) and
 * watches the span of those mappings as often as the module grants.  Then
 * root, in its own process:
 *   - MADV_PAGEOUT of its own mapping of the page (the reclaim path:
 *     one rmap invalidation per attacker mapping);
 *   - truncate of the file to 0 (one invalidation per mapping);
 * while a bystander thread mmap()s and munmap()s the file in a loop
 * (its mmap waits for i_mmap_rwsem, which the truncate holds).  Each
 * operation must take at most twice its control (the same file mapped
 * 1,000 times by the same user without watches) plus 50 ms, and so must
 * the bystander's slowest mmap.  On 1dca6a6: truncate 29.7-36 s, pageout
 * 16-17 s, the bystander blocked as long (controls 0.003-0.46 s).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "mrmon_priv.h"
#include "mrmon_test.h"

#define MAPS 1000
#define MAX_WATCHES 65536

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

struct bystander {
	const char *path;
	int stop;
	double worst;
};

static void *bystander_run(void *arg)
{
	struct bystander *b = arg;
	int fd = open(b->path, O_RDONLY);

	while (fd >= 0 && !__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		double t0 = priv_now(), dt;
		void *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);

		dt = priv_now() - t0;
		if (p != MAP_FAILED)
			munmap(p, PAGE);
		if (dt > b->worst)
			b->worst = dt;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

struct attacker_arg {
	const char *path;
	int watch;
	int ready[2], go[2];	/* pipes: the attacker writes ready, reads go */
};

/* The attacker, uid 65534: maps the file MAPS times, watches (or not),
 * says ready on `ready`, waits for `go` to close. */
static int attacker(void *arg)
{
	const struct attacker_arg *a = arg;
	const char *path = a->path;
	int watch = a->watch, ready = a->ready[1], go = a->go[0];
	static struct mrmon_range r[1024];
	uintptr_t lo = ~0ul, hi = 0;
	struct mon m;
	int fd, n = 0, rc = 0;
	char c = 0;

	close(a->ready[0]);
	close(a->go[1]);	/* so that the parent's close is an end of file */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	for (int i = 0; i < MAPS; i++) {
		char *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);

		CHECK(p != MAP_FAILED);
		if ((uintptr_t)p < lo)
			lo = (uintptr_t)p;
		if ((uintptr_t)p + PAGE > hi)
			hi = (uintptr_t)p + PAGE;
	}
	if (watch) {
		CHECK_EQ(mon_open(&m, 65536, 64), 0);
		while (n < MAX_WATCHES) {
			struct mrmon_batch b = { .entries = (uintptr_t)r };

			b.count = m.hs.max_batch < 1024 ? m.hs.max_batch : 1024;
			for (uint32_t i = 0; i < b.count; i++)
				r[i] = (struct mrmon_range){ .start = lo, .len = hi - lo };
			rc = mon_ioctl(m.fd, MRMON_IOC_WATCH, &b);
			n += b.done;
			if (rc || b.done < b.count)
				break;
		}
		printf("uid %d: %d watches of the %lu kB over %d mappings (then %s)\n",
		       (int)getuid(), n, (hi - lo) >> 10, MAPS, rc ? strerror(-rc) : "the cap");
	}
	CHECK(write(ready, &c, 1) == 1);
	CHECK(read(go, &c, 1) >= 0);
	return test_result();
}

/* One run: the attacker set up (with or without watches), root's
 * pageout and truncate timed, the bystander's worst mmap. */
static void run(const char *path, int watch, double t[3])
{
	struct attacker_arg a = { .path = path, .watch = watch };
	struct bystander b = { .path = path };
	pthread_t th;
	char c, *mine;
	int fd;
	pid_t pid;

	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(fchmod(fd, 0644), 0);
	CHECK_EQ(ftruncate(fd, PAGE), 0);
	mine = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(mine != MAP_FAILED);
	mine[0] = 1;
	CHECK_EQ(pipe(a.ready), 0);
	CHECK_EQ(pipe(a.go), 0);
	pid = mon_spawn_as_nobody(attacker, &a);
	CHECK(pid > 0);
	close(a.ready[1]);
	close(a.go[0]);
	CHECK(read(a.ready[0], &c, 1) == 1);
	CHECK_EQ(pthread_create(&th, NULL, bystander_run, &b), 0);
	usleep(20000);
	t[0] = priv_now();
	madvise(mine, PAGE, MADV_PAGEOUT);
	t[0] = priv_now() - t[0];
	t[1] = priv_now();
	CHECK_EQ(ftruncate(fd, 0), 0);
	t[1] = priv_now() - t[1];
	usleep(20000);
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	t[2] = b.worst;
	close(a.go[1]);
	CHECK_EQ(mon_child_status(pid), 0);
	close(a.ready[0]);
	munmap(mine, PAGE);
	close(fd);
}

int main(void)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char path[256];
	double ctl[3], t[3];
	static const char *what[3] = { "MADV_PAGEOUT", "truncate", "bystander mmap" };

	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	if (geteuid() != 0)
		SKIP("needs root (the file's owner, and setuid)");
	snprintf(path, sizeof(path), "%s/mrmon-filemaps-%d", dir, (int)getpid());
	run(path, 0, ctl);
	run(path, 1, t);
	for (int i = 0; i < 3; i++) {
		printf("%-15s %.3f s with the watches, %.3f s without (control)\n", what[i], t[i],
		       ctl[i]);
		CHECK(t[i] <= 2 * ctl[i] + 0.050);
	}
	unlink(path);
	return test_result();
}
