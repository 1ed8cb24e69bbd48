/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-memory: what a descriptor costs the kernel, and who pays.
 *   - An idle slot (SETUP of 65,536 slots, no watch) costs at most 64 bytes,
 *     measured as the growth of the memory cgroup of the process; a live
 *     watch's cost is printed.
 *   - HANDSHAKE's max_slots, with the default parameters, is at most 65,536.
 *   - ABI 3 (issue 24, finding 5): the memory is charged to the memory
 *     cgroup only, not to RLIMIT_MEMLOCK (the pinned-memory counter); what
 *     is limited per address space is the span the watches cover,
 *     charged as the registrations they protect would be: uid 65534 with
 *     a 1 MiB RLIMIT_MEMLOCK gets the floor, span_floor_mb (64 MiB), so
 *     its one-page watches stop with EDQUOT after exactly 16,384, a watch
 *     of [0, TASK_SIZE) is E2BIG, and a second process of the same uid
 *     (another address space, its own span) is served while the first
 *     holds its budget, as before it starts and after it exits.
 *
 * Regression test for issue 13, defect 4: on 1682920 a slot was a 312-byte
 * struct allocated at SETUP for every slot, max_slots was 2^20, and nothing
 * was charged to the user.
 *
 * Controls: the same second process succeeds before the first starts;
 * root (CAP_IPC_LOCK) under the same 1 MiB limit is not stopped; an idle
 * slot costs at least its 8-byte word and its 12 bytes of the slot table,
 * so the measurement sees the module's allocations.
 *
 * memory.current includes up to a batch of pages pre-charged on each CPU;
 * each measured process runs on one CPU, and a reading first makes another
 * cgroup charge on that CPU, which hands that batch back.
 */
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
#include "mrmon_test.h"
#include "mrmon_priv.h"

#define IDLE_SLOTS	65536u
#define IDLE_BOUND	64
#define LIVE_WATCHES	16384u
#define MEMLOCK_LOW	(1ul << 20)
#define A_SLOTS		20000u
#define SPAN_FLOOR	(64ul << 20)	/* span_floor_mb's default */
#define B_SLOTS		4096u
#define B_WATCHES	256u

static char cg_measured[256], cg_other[256];
static int cpu;

static void pin_self(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_EQ(sched_setaffinity(0, sizeof(set), &set), 0);
}

/*
 * The meter: a process in cg_other on the same CPU.  Asked for a reading,
 * it charges a pipe page and the pipe's objects to cg_other there, which
 * hands back whatever that CPU had pre-charged to cg_measured, then reads
 * cg_measured's memory.current.  Measured processes of any uid ask it over
 * the pipes they inherit.
 */
static int meter_cmd[2], meter_ans[2];

static void meter_serve(void)
{
	static char page[PAGE];
	char c;
	long v;

	close(meter_cmd[1]);
	close(meter_ans[0]);
	pin_self();
	if (priv_memcg_enter(cg_other))
		_exit(2);
	while (read(meter_cmd[0], &c, 1) == 1) {
		int p[2];

		if (pipe(p) || write(p[1], page, sizeof(page)) != sizeof(page))
			_exit(3);
		close(p[0]);
		close(p[1]);
		v = priv_memcg_current(cg_measured);
		if (write(meter_ans[1], &v, sizeof(v)) != sizeof(v))
			_exit(4);
	}
	_exit(0);
}

static long meter(void)
{
	long v = -1;

	if (write(meter_cmd[1], "m", 1) != 1 || read(meter_ans[0], &v, sizeof(v)) != sizeof(v))
		return -1;
	return v;
}

/* Forks fn into cg_measured on `cpu`, as uid 65534 under MEMLOCK_LOW if
 * `nobody`; fn talks to the parent over `to`/`from`.  Returns the pid. */
static pid_t spawn(void (*fn)(int in, int out), int nobody, int *to, int *from)
{
	int a[2], b[2];
	pid_t pid;

	CHECK(pipe(a) == 0 && pipe(b) == 0);
	pid = fork();
	if (pid == 0) {
		test_failures = 0;	/* the child's own verdict */
		close(a[1]);
		close(b[0]);
		pin_self();
		if (priv_memcg_enter(cg_measured) || priv_rlimit(RLIMIT_MEMLOCK, MEMLOCK_LOW) ||
		    (nobody && priv_become(PRIV_NOBODY)))
			_exit(2);
		fn(a[0], b[1]);
		_exit(test_result());
	}
	close(a[0]);
	close(b[1]);
	*to = a[1];
	*from = b[0];
	return pid;
}

static int reap(pid_t pid, int to, int from)
{
	int status = 0;

	close(to);
	close(from);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static struct mrmon_range batch[256];

/* `n` watches of one page, in batches; 0 or the first error, *done the
 * watches made. */
static int watch_many(struct mon *m, const char *p, uint32_t n, uint32_t *done)
{
	struct mrmon_range *r = batch;
	int rc = 0;

	for (*done = 0; *done < n && !rc;) {
		struct mrmon_batch b = { .entries = (uintptr_t)r };

		b.count = n - *done < 256 ? n - *done : 256;
		for (uint32_t i = 0; i < b.count; i++)
			r[i] = (struct mrmon_range){ .start = (uintptr_t)p, .len = PAGE };
		rc = mon_ioctl(m->fd, MRMON_IOC_WATCH, &b);
		*done += b.done;
	}
	return rc;
}

static void out_double(int out, double v)
{
	CHECK_EQ(write(out, &v, sizeof(v)), (ssize_t)sizeof(v));
}

static double in_double(int in)
{
	double v = -1;

	return read(in, &v, sizeof(v)) == sizeof(v) ? v : -1;
}

/* Root, in cg_measured: bytes per idle slot, then per live watch. */
static void per_slot(int in, int out)
{
	char *p = mon_map_anon(PAGE);
	long before, after, live;
	struct mon m;
	uint32_t done;

	(void)in;
	memset(batch, 0, sizeof(batch));	/* faulted in before the readings */
	before = meter();
	CHECK_EQ(mon_open(&m, IDLE_SLOTS, 1), 0);
	after = meter();
	CHECK_EQ(watch_many(&m, p, LIVE_WATCHES, &done), 0);
	live = meter();
	out_double(out, (double)(after - before) / IDLE_SLOTS);
	out_double(out, (double)(live - after) / LIVE_WATCHES);
	mon_close(&m);
}

/* uid 65534: fills the user's budget, reports, holds it until told. */
static void filler(int in, int out)
{
	char *p = mon_map_anon(PAGE), c;
	long before, after;
	uint32_t done;
	struct mon m;
	int rc;

	memset(batch, 0, sizeof(batch));
	before = meter();
	rc = mon_open(&m, A_SLOTS, 64);
	if (!rc)
		rc = watch_many(&m, p, A_SLOTS, &done);
	else
		done = 0;
	after = meter();
	out_double(out, rc);
	out_double(out, done);
	out_double(out, (double)(after - before));
	CHECK_EQ(read(in, &c, 1), 1);
	mon_close(&m);
}

/* uid 65534: a watch of the whole address space; reports the error. */
static void whole(int in, int out)
{
	uint32_t slot;
	uint64_t e;
	struct mon m;
	int rc = mon_open(&m, B_SLOTS, 64);

	(void)in;
	if (!rc)
		rc = mon_watch(&m, NULL, (1ul << 47) - PAGE, 0, &slot, &e);
	out_double(out, rc);
	mon_close(&m);
}

/* uid 65534 (or root): SETUP and B_WATCHES watches; reports the error. */
static void small(int in, int out)
{
	char *p = mon_map_anon(PAGE);
	uint32_t done = 0;
	struct mon m;
	int rc = mon_open(&m, B_SLOTS, 64);

	(void)in;
	if (!rc)
		rc = watch_many(&m, p, B_WATCHES, &done);
	out_double(out, rc);
	mon_close(&m);
}

static uint32_t root_watches;

/* Root under MEMLOCK_LOW: root_watches watches must all succeed. */
static void unlimited(int in, int out)
{
	char *p = mon_map_anon(PAGE);
	uint32_t done = 0;
	struct mon m;
	int rc = mon_open(&m, A_SLOTS, 64);

	(void)in;
	if (!rc)
		rc = watch_many(&m, p, root_watches, &done);
	out_double(out, rc);
	out_double(out, done);
	mon_close(&m);
}

/* Runs `fn` in a child and returns its first reported number. */
static int run_small(void (*fn)(int, int), int nobody)
{
	int to, from;
	pid_t pid = spawn(fn, nobody, &to, &from);
	int rc = (int)in_double(from);

	CHECK_EQ(reap(pid, to, from), 0);
	return rc;
}

static void costs(void)
{
	int to, from;
	pid_t pid = spawn(per_slot, 0, &to, &from);
	double slot = in_double(from), watch = in_double(from);

	CHECK_EQ(reap(pid, to, from), 0);
	printf("kernel memory: %.1f bytes per idle slot (SETUP of %u slots), "
	       "%.1f bytes per live watch (%u watches)\n", slot, IDLE_SLOTS, watch, LIVE_WATCHES);
	CHECK(slot <= IDLE_BOUND);
	CHECK(slot >= 8 + 12);	/* control: the word and the slot table */
}

static void charge(void)
{
	int to, from, rc_b0, rc_b, rc_b2;
	double rc_a, watches_a, bytes_a, rc_root, done_root;
	pid_t a;

	rc_b0 = run_small(small, 1);
	a = spawn(filler, 1, &to, &from);
	rc_a = in_double(from);
	watches_a = in_double(from);
	bytes_a = in_double(from);
	rc_b = run_small(small, 1);
	CHECK_EQ(write(to, "q", 1), 1);
	CHECK_EQ(reap(a, to, from), 0);
	rc_b2 = run_small(small, 1);
	printf("uid %d, RLIMIT_MEMLOCK %lu kB: stopped by %s after %.0f one-page watches "
	       "(memory cgroup: %.0f kB); a second process: %s alone, %s meanwhile, %s after; "
	       "a watch of [0, TASK_SIZE): %s\n", PRIV_NOBODY,
	       MEMLOCK_LOW >> 10, strerror((int)-rc_a), watches_a, bytes_a / 1024,
	       strerror(-rc_b0), strerror(-rc_b), strerror(-rc_b2),
	       strerror(-run_small(whole, 1)));
	CHECK_EQ(rc_a, -EDQUOT);
	CHECK_EQ(watches_a, SPAN_FLOOR / PAGE);
	CHECK_EQ(rc_b0, 0);
	CHECK_EQ(rc_b, 0);
	CHECK_EQ(rc_b2, 0);
	CHECK_EQ(run_small(whole, 1), -E2BIG);

	/* Control: root (CAP_IPC_LOCK) is not limited by the span. */
	root_watches = A_SLOTS - 1;
	a = spawn(unlimited, 0, &to, &from);
	rc_root = in_double(from);
	done_root = in_double(from);
	CHECK_EQ(reap(a, to, from), 0);
	printf("root under the same limit: %.0f of %u watches, %s\n", done_root, root_watches,
	       strerror((int)-rc_root));
	CHECK_EQ(rc_root, 0);
	CHECK_EQ(done_root, root_watches);
}

int main(void)
{
	struct mon m;
	pid_t server;
	int rc;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (geteuid() != 0)
		SKIP("needs root (cgroups, uid 65534)");
	CHECK_EQ(mon_open(&m, 1, 1), 0);
	printf("HANDSHAKE: max_slots %u\n", m.hs.max_slots);
	CHECK(m.hs.max_slots <= 65536);
	mon_close(&m);
	rc = priv_memcg_make("mrmon-memory", cg_measured, sizeof(cg_measured));
	if (!rc)
		rc = priv_memcg_make("mrmon-memory-other", cg_other, sizeof(cg_other));
	if (rc)
		SKIP("no cgroup v2 memory controller: %s", strerror(-rc));
	cpu = sched_getcpu();
	CHECK(pipe(meter_cmd) == 0 && pipe(meter_ans) == 0);
	server = fork();
	if (server == 0)
		meter_serve();

	costs();
	charge();

	close(meter_cmd[1]);
	CHECK(waitpid(server, &rc, 0) == server && WIFEXITED(rc) && !WEXITSTATUS(rc));
	rmdir(cg_measured);
	rmdir(cg_other);
	return test_result();
}
