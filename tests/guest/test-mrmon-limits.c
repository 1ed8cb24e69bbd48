/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-limits: what one descriptor can make the kernel allocate is
 * bounded by the module parameters, and it is charged to the caller's
 * memory cgroup, so memory.max bounds a process's total.
 *   SETUP nslots > max_slots or nevents > max_events   EINVAL
 *   WATCH count > max_batch                              EINVAL
 *   watch number nslots + 1                              ENOSPC
 * Then (cgroup v2, mounted here if need be) a child in its own cgroup sets
 * up DESCS descriptors of 65,536 slots and no watch: memory.current grows
 * by at least their words and slot tables and at most what the words, the
 * slot tables, the header page, the event ring and the bookkeeping take,
 * so a slot without a watch costs its 8-byte word and 12 bytes of the slot
 * table (a watch pointer and a free-stack entry), and nothing more (ABI 1
 * allocated a slot structure of some hundred bytes for every slot at
 * SETUP: megabytes per descriptor here, far past the bound).
 * memory.current moves in batches of 64 pages per CPU (the memcg charge
 * stock): both bounds allow that much.
 * Control: the same set-ups by a process outside that cgroup leave its
 * memory.current where it was.  (Reaching memory.max calls the memcg OOM
 * killer, which logs a stack dump: docs/security.md; not done here.)
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "mrmon_test.h"
#include "mrmon_priv.h"

#define SLOTS	65536
#define EVENTS	32
#define DESCS	8
/* Per descriptor: the map (a header page and a word per slot), its page
 * array, the slot table and the event ring (kvcalloc, rounded up to a
 * power of two at most), the context, the file and the VMA (two pages are
 * plenty). */
#define MAP_PAGES (1 + (size_t)SLOTS * 8 / PAGE)
#define SLOT_TABLE ((size_t)SLOTS * (8 + 4))
#define BOUND_BYTES (MAP_PAGES * PAGE + 2 * MAP_PAGES * 8 + 2 * SLOT_TABLE + 2 * EVENTS * 40 + \
		     2 * PAGE)

static char cg[256];

static void write_file(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs(v, f);
		CHECK_EQ(fclose(f), 0);
	}
}

/* The same, where failing is an answer (a controller the kernel lacks). */
static int write_file_ok(const char *path, const char *v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return 0;
	fputs(v, f);
	return fclose(f) == 0;
}

static void write_param(const char *name, unsigned int v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), "/sys/module/mrmon/parameters/%s", name);
	snprintf(val, sizeof(val), "%u\n", v);
	write_file(path, val);
}

static void params(void)
{
	struct mon m;
	struct mrmon_setup su = { .nslots = 65, .nevents = 32 };
	struct mrmon_range r[9];
	struct mrmon_batch b = { .entries = (uintptr_t)r, .count = 9 };
	char *p = mon_map_anon(65 * PAGE);
	uint32_t slot;
	uint64_t e;
	int fd;

	write_param("max_slots", 64);
	write_param("max_events", 32);
	write_param("max_batch", 8);
	fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0);
	m.hs = (struct mrmon_handshake){ .abi_version = MRMON_ABI_VERSION };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &m.hs), 0);
	CHECK(m.hs.max_slots == 64 && m.hs.max_events == 32 && m.hs.max_batch == 8);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_SETUP, &su), -EINVAL);
	su = (struct mrmon_setup){ .nslots = 64, .nevents = 33 };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_SETUP, &su), -EINVAL);
	/* Read once, at open: a later write changes no live descriptor
	 * (issue 24, finding 7); a new descriptor sees it (the control). */
	write_param("max_batch", 4);
	m.hs = (struct mrmon_handshake){ .abi_version = MRMON_ABI_VERSION };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &m.hs), 0);
	CHECK_EQ(m.hs.max_batch, 8);
	close(fd);
	fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC);
	m.hs = (struct mrmon_handshake){ .abi_version = MRMON_ABI_VERSION };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &m.hs), 0);
	CHECK_EQ(m.hs.max_batch, 4);
	close(fd);
	write_param("max_batch", 8);

	CHECK_EQ(mon_open(&m, 64, 32), 0);
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 9; i++)
		r[i] = (struct mrmon_range){ .start = (uintptr_t)p + i * PAGE, .len = PAGE };
	CHECK_EQ(mon_ioctl(m.fd, MRMON_IOC_WATCH, &b), -EINVAL);
	for (int i = 0; i < 64; i++)
		CHECK_EQ(mon_watch(&m, p + i * PAGE, PAGE, i, &slot, &e), 0);
	CHECK_EQ(mon_watch(&m, p + 64 * PAGE, PAGE, 64, &slot, &e), -ENOSPC);
	CHECK_EQ(mon_unwatch(&m, slot = 5, 0), -ESTALE);
	mon_close(&m);
	munmap(p, 65 * PAGE);
	printf("parameters bound SETUP (EINVAL past 64 slots, 32 events), WATCH (EINVAL past "
	       "a batch of 8, ENOSPC at watch 65)\n");
}

/* A cgroup v2 directory with the memory controller, or 0. */
static int cgroup_make(void)
{
	const char *root = "/sys/fs/cgroup";
	char path[300];
	struct stat st;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (stat(path, &st)) {
		root = "/tmp/mrmon-cgroup2";
		mkdir(root, 0755);
		if (mount("none", root, "cgroup2", 0, NULL) && errno != EBUSY)
			return 0;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (!write_file_ok(path, "+memory"))
		return 0;	/* a kernel without CONFIG_MEMCG */
	snprintf(cg, sizeof(cg), "%s/mrmon-limits", root);
	if (mkdir(cg, 0755) && errno != EEXIST)
		return 0;
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	return stat(path, &st) == 0;
}

/* Sets up DESCS descriptors between two writes to `out`, then waits. */
static void setups(int in, int out)
{
	static struct mon m[DESCS];
	char c = 'r';

	CHECK_EQ(write(out, &c, 1), 1);
	CHECK_EQ(read(in, &c, 1), 1);
	for (int i = 0; i < DESCS; i++)
		CHECK_EQ(mon_open(&m[i], SLOTS, EVENTS), 0);
	CHECK_EQ(write(out, &c, 1), 1);
	CHECK_EQ(read(in, &c, 1), 1);
	for (int i = 0; i < DESCS; i++)
		mon_close(&m[i]);
}

/* memory.current of cg grows by how much while a process, inside cg or
 * not, runs setups(). */
static long charged(int inside)
{
	int to[2], from[2], status;
	char c, path[300];
	long before, after;
	pid_t pid;

	CHECK(pipe(to) == 0 && pipe(from) == 0);
	pid = fork();
	if (pid == 0) {
		if (inside) {
			snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
			write_file(path, "0\n");
		}
		setups(to[0], from[1]);
		_exit(test_result());
	}
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	CHECK_EQ(read(from[0], &c, 1), 1);
	before = priv_read_long(path);
	CHECK_EQ(write(to[1], &c, 1), 1);
	CHECK_EQ(read(from[0], &c, 1), 1);
	after = priv_read_long(path);
	CHECK_EQ(write(to[1], &c, 1), 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status));
	close(to[0]);
	close(to[1]);
	close(from[0]);
	close(from[1]);
	return after - before;
}

int main(void)
{
	struct mon m;
	long in, out;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (mon_open(&m, 1, 1))
		SKIP("cannot set up /dev/mrmon");
	mon_close(&m);
	params();

	write_param("max_slots", SLOTS);
	write_param("max_events", EVENTS);
	if (!cgroup_make()) {
		printf("no cgroup v2 memory controller: the parameter bound only\n");
	} else {
		long words = (long)DESCS * SLOTS * 8;
		long tables = (long)DESCS * SLOT_TABLE;
		long slop = 64 * (long)PAGE * sysconf(_SC_NPROCESSORS_ONLN);

		in = charged(1);
		out = charged(0);
		printf("%d descriptors of %d slots charged %ld kB to their cgroup "
		       "(words and slot tables alone %ld kB, bound %zu kB, charge batches %ld kB); "
		       "from outside: %+ld kB\n",
		       DESCS, SLOTS, in / 1024, (words + tables) / 1024, DESCS * BOUND_BYTES / 1024,
		       slop / 1024, out / 1024);
		CHECK(in >= words + tables - slop);
		CHECK(in <= (long)(DESCS * BOUND_BYTES) + slop);
		CHECK(out < words - slop);
		rmdir(cg);
	}
	write_param("max_slots", m.hs.max_slots);
	write_param("max_events", m.hs.max_events);
	write_param("max_batch", m.hs.max_batch);
	return test_result();
}
