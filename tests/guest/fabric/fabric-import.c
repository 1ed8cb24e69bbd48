/* SPDX-License-Identifier: MIT */
/*
 * fabric-import: the mrmon fid_mem_monitor driven the way libfabric 1.17
 * drives it (start, subscribe, valid on a hit, notify from the monitor),
 * with our own notify() standing in for libfabric's, then imported into
 * libfabric for real.  Needs /dev/mrmon (the guest); skips without it.
 *
 * Checks: valid() is true for a subscribed intact range and turns false
 * as soon as a raw munmap syscall returns (no waiting for the thread);
 * a range unmapped without a hit on it is reported by notify(); one whose
 * entry a false valid() already dropped is not (a late notify would drop
 * a remap's fresh entry); a second, untouched range stays valid and is
 * never notified (the control: the check sees only what changed);
 * a remap at the same address stays invalid until subscribed again; an
 * unknown range is never valid; a forked child misses and cannot
 * subscribe while the parent's watch stays valid; fi_import accepts the
 * monitor once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "mrmon_fi.h"

#define LEN (64 * 1024)

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uintptr_t start, end; } seen[64];	/* notified ranges */
static unsigned seen_count;
/* While set, a notify of [held_start, held_end) waits: it holds the thread. */
static uintptr_t held_start, held_end;
static bool held, holding;

static void test_notify(struct fid_mem_monitor *mon, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;

	pthread_mutex_lock(&seen_lock);
	if (seen_count < sizeof(seen) / sizeof(seen[0]))
		seen[seen_count++] = (typeof(seen[0])){ a, a + len };
	pthread_mutex_unlock(&seen_lock);
	if (a < __atomic_load_n(&held_end, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&held_start, __ATOMIC_ACQUIRE) < a + len) {
		__atomic_store_n(&holding, true, __ATOMIC_RELEASE);
		while (__atomic_load_n(&held, __ATOMIC_ACQUIRE))
			nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
	}
}

static struct fi_ops_mem_notify notify_ops = {
	.size = sizeof(notify_ops),
	.notify = test_notify,
};

static int failures;

static void check(bool ok, const char *what)
{
	printf("%s %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

static bool overlaps_seen(uintptr_t a, size_t len)
{
	bool hit = false;

	pthread_mutex_lock(&seen_lock);
	for (unsigned i = 0; i < seen_count; i++)
		hit = hit || (seen[i].start < a + len && a < seen[i].end);
	pthread_mutex_unlock(&seen_lock);
	return hit;
}

/*
 * The thread reads the event within milliseconds; allow emulated slowness.
 * With a 0: waits until the thread is held in notify().
 */
static bool wait_notified(uintptr_t a, size_t len)
{
	for (int i = 0; i < 500; i++) {
		if (a ? overlaps_seen(a, len) : __atomic_load_n(&holding, __ATOMIC_ACQUIRE))
			return true;
		nanosleep(&(struct timespec){ .tv_nsec = 10 * 1000 * 1000 }, NULL);
	}
	return false;
}

static void *map_at(void *hint, bool fixed)
{
	void *p = mmap(hint, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED || (fixed && p != hint)) {
		perror("mmap");
		exit(1);
	}
	memset(p, 0x5a, LEN);
	return p;
}

/* The child may not use the parent's watches: it misses and cannot subscribe. */
static void check_fork(struct fid_mem_monitor *mon, char *a)
{
	struct fi_ops_mem_monitor *ops = mon->export_ops;
	int status = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(!ops->valid(mon, a, LEN) && ops->subscribe(mon, a, LEN) < 0 ? 0 : 1);
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "forked child: a not valid, subscribe refused");
	check(ops->valid(mon, a, LEN), "parent: a still valid after the fork");
}

static void direct_checks(struct fid_mem_monitor *mon)
{
	struct fi_ops_mem_monitor *ops = mon->export_ops;
	char *a = map_at(NULL, false), *b = map_at(NULL, false), *c = map_at(NULL, false);
	char *d = map_at(NULL, false);
	struct mrfi_stats st;
	int rc;

	mon->import_ops = &notify_ops;
	rc = ops->start(mon);
	check(rc == 0, "start");
	if (rc)
		return;
	check(ops->subscribe(mon, a, LEN) == 0, "subscribe a");
	check(ops->subscribe(mon, b + 100, 200) == 0, "subscribe an unaligned part of b");
	check(ops->subscribe(mon, c, LEN) == 0, "subscribe c");
	check(ops->subscribe(mon, d, LEN) == 0, "subscribe d");
	check(ops->valid(mon, a, LEN), "a valid while intact");
	check(ops->valid(mon, b + 100, 200), "b valid while intact");
	check(!ops->valid(mon, a, LEN / 2), "a range never subscribed is not valid");

	/* d's notify holds the event thread: a's event waits behind it. */
	held_start = (uintptr_t)d;
	held_end = (uintptr_t)d + LEN;
	__atomic_store_n(&held, true, __ATOMIC_RELEASE);
	munmap(d, LEN);
	check(wait_notified(0, 0), "notify reported d (the thread is held there)");
	syscall(SYS_munmap, a, LEN);
	check(!ops->valid(mon, a, LEN), "a not valid once the raw munmap returned");
	__atomic_store_n(&held, false, __ATOMIC_RELEASE);
	syscall(SYS_munmap, c, LEN);
	check(ops->valid(mon, b + 100, 200), "b (untouched) still valid");
	/* Events are handled in order: once c is reported, a was handled. */
	check(wait_notified((uintptr_t)c, LEN), "notify reported c");
	check(!overlaps_seen((uintptr_t)a, LEN), "a not notified (its entry is known gone)");
	check(!overlaps_seen((uintptr_t)b, LEN), "notify never reported b");

	map_at(a, true);
	check(!ops->valid(mon, a, LEN), "a remapped at the same address: still not valid");
	check(ops->subscribe(mon, a, LEN) == 0, "subscribe the new a");
	check(ops->valid(mon, a, LEN), "new a valid");
	check(ops->subscribe(mon, a, LEN) == 0, "subscribe a again (shares the watch)");

	check_fork(mon, a);
	ops->unsubscribe(mon, b + 100, 200);
	check(!ops->valid(mon, b + 100, 200), "b not valid once unsubscribed");
	munmap(b, LEN);

	mrfi_monitor_stats(mon, &st);
	printf("stats: watches %llu shared %llu valid %llu invalid %llu events %llu notified %llu live %llu\n",
	       (unsigned long long)st.watches, (unsigned long long)st.shared,
	       (unsigned long long)st.valid, (unsigned long long)st.invalid,
	       (unsigned long long)st.events, (unsigned long long)st.notified,
	       (unsigned long long)st.live);
	check(st.watches == 5 && st.shared == 1 && st.notified == 2 && st.live == 1,
	      "counters: 5 watches, 1 shared, 2 notified (c, d), 1 live");
	ops->stop(mon);
	check(!ops->valid(mon, a, LEN), "nothing valid once stopped");
	munmap(a, LEN);
	mon->import_ops = NULL;
}

int main(void)
{
	struct fid_mem_monitor *mon, *second;
	int rc = mrfi_monitor_open(&mon);

	if (rc == -ENODEV || rc == -ENOENT || rc == -EACCES) {
		printf("SKIP: /dev/mrmon: %s (the mrmon module runs in the guest)\n", strerror(-rc));
		return 77;
	}
	if (rc) {
		printf("FAIL: mrfi_monitor_open: %s\n", strerror(-rc));
		return 1;
	}
	direct_checks(mon);

	check(mrfi_monitor_import(mon) == 0, "fi_import into libfabric's mr_cache");
	check(mrfi_monitor_open(&second) == 0, "a second monitor opens");
	check(mrfi_monitor_import(second) == -FI_EBUSY, "libfabric refuses a second import");
	mrfi_monitor_close(second);
	mrfi_monitor_close(mon);
	check(mrfi_monitor_import(NULL) == -EINVAL, "import of NULL: -EINVAL");
	printf("%s fabric-import\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
