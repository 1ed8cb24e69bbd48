/* SPDX-License-Identifier: MIT */
/*
 * A callback that calls into its own cache on the same thread gets
 * -EDEADLK and changes nothing; it used to wait forever on the cache's
 * lock, which the thread already held.  Every entry point (get, as a miss
 * and as a hit, put, flush, progress, invalidate, destroy, stats_get),
 * from every callback that runs under the lock (backend reg and dereg,
 * on_invalidate, on_evict).  Control: a callback of one cache may use
 * another cache.  Each case runs in a child process, whose watchdog turns
 * a hang into a failure naming the case.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "testbackend.h"
#include "testutil.h"

#define PAGE 4096
#define WATCHDOG_S 10

enum hook { ON_REG, ON_DEREG, ON_INVALIDATE, ON_EVICT, HOOK_COUNT };
enum entry { GET_MISS, GET_HIT, PUT, FLUSH, PROGRESS, INVALIDATE, DESTROY, STATS,
	     ENTRY_COUNT };

static const char *const hook_names[] = { "reg", "dereg", "on_invalidate", "on_evict" };
static const char *const entry_names[] = { "get (miss)", "get (hit)", "put", "flush",
					   "progress", "invalidate", "destroy", "stats_get" };

/* What the armed callback does: one call of `entry` on `target`. */
static struct {
	enum hook hook;
	enum entry entry;
	int armed;
	struct mrcache *target;
	struct mrcache_region *held;	/* a region of target this test holds */
	char *fresh;			/* a page target has not cached */
	int calls, rc;
	struct mrcache_region *got;	/* what a successful get returned */
} re;

static char case_name[96];

static int call_entry(void)
{
	struct mrcache_stats st;

	switch (re.entry) {
	case GET_MISS: return mrcache_get(re.target, re.fresh, PAGE, 0, &re.got);
	case GET_HIT:
		return mrcache_get(re.target, mrcache_region_addr(re.held), PAGE, 0, &re.got);
	case PUT: return mrcache_put(re.target, re.held);
	case FLUSH: return mrcache_flush(re.target);
	case PROGRESS: return mrcache_progress(re.target);
	case INVALIDATE: return mrcache_invalidate(re.target, mrcache_region_addr(re.held), PAGE);
	case DESTROY: return mrcache_destroy(re.target);
	case STATS: return mrcache_stats_get(re.target, &st);
	case ENTRY_COUNT: break;
	}
	return -ENOSYS;
}

static void from_callback(enum hook h)
{
	if (!re.armed || re.hook != h)
		return;
	re.armed = 0;
	re.calls++;
	re.rc = call_entry();
}

static int hooked_reg(void *arg, void *addr, size_t len, unsigned access, void **handle,
		      uint64_t *key)
{
	from_callback(ON_REG);
	return test_backend_ops.reg(arg, addr, len, access, handle, key);
}

static int hooked_dereg(void *arg, void *handle)
{
	from_callback(ON_DEREG);
	return test_backend_ops.dereg(arg, handle);
}

static void hooked_invalidate(void *arg, uintptr_t start, uintptr_t end, enum mrcache_cause cause)
{
	from_callback(ON_INVALIDATE);
}

static void hooked_evict(void *arg, uintptr_t start, uintptr_t end)
{
	from_callback(ON_EVICT);
}

static const struct mrcache_backend_ops hooked_ops = { .reg = hooked_reg, .dereg = hooked_dereg };

static void watchdog(int sig)
{
	static const char msg[] = "hung (watchdog): ";

	write(2, msg, sizeof(msg) - 1);
	write(2, case_name, strlen(case_name));
	write(2, "\n", 1);
	_exit(1);
}

static struct mrcache *cache_new(struct test_backend *tb, size_t max_regions)
{
	struct mrcache_config cfg;
	struct mrcache *c = NULL;

	test_backend_config(tb, &cfg, MRCACHE_MONITOR_NONE);
	cfg.ops = &hooked_ops;
	cfg.max_regions = max_regions;
	cfg.on_invalidate = hooked_invalidate;
	cfg.on_evict = hooked_evict;
	CHECK_EQ(mrcache_create(&cfg, &c), 0);
	return c;
}

/* Make `hook` run on cache c: pages 2 and 3 of mem are free to use. */
static void trigger(struct mrcache *c, enum hook h, char *mem)
{
	struct mrcache_region *r;

	switch (h) {
	case ON_REG:
		CHECK_EQ(mrcache_get(c, mem + 2 * PAGE, PAGE, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
		break;
	case ON_DEREG:
	case ON_INVALIDATE:
		CHECK_EQ(mrcache_get(c, mem + 2 * PAGE, PAGE, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
		re.armed = 1;
		CHECK_EQ(mrcache_invalidate(c, mem + 2 * PAGE, PAGE), 1);
		break;
	case ON_EVICT:	/* the second region evicts the first */
		CHECK_EQ(mrcache_get(c, mem + 2 * PAGE, PAGE, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
		re.armed = 1;
		CHECK_EQ(mrcache_get(c, mem + 3 * PAGE, PAGE, 0, &r), 0);
		CHECK_EQ(mrcache_put(c, r), 0);
		break;
	case HOOK_COUNT:
		break;
	}
}

/* One case: a callback of cache c calls `e` on target (c itself, or other). */
static void run_case(enum hook h, enum entry e, int on_other, int expect)
{
	struct test_backend tb, tbo;
	struct mrcache *c, *other = NULL;
	char *mem = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	snprintf(case_name, sizeof(case_name), "%s calls %s on %s", hook_names[h],
		 entry_names[e], on_other ? "another cache" : "its own cache");
	alarm(WATCHDOG_S);
	test_backend_init(&tb, 0);
	/* on_evict: room for the regions trigger() uses, minus one */
	c = cache_new(&tb, h == ON_EVICT ? (on_other ? 1 : 2) : 0);
	if (on_other) {
		test_backend_init(&tbo, 0);
		other = cache_new(&tbo, 0);
	}
	memset(&re, 0, sizeof(re));
	re.hook = h;
	re.entry = e;
	re.target = on_other ? other : c;
	re.fresh = mem + PAGE;
	CHECK_EQ(mrcache_get(re.target, mem, PAGE, 0, &re.held), 0);
	re.armed = h == ON_REG;
	trigger(c, h, mem);

	if (re.calls != 1 || re.rc != expect)
		fprintf(stderr, "%s: %d call(s), returned %d, expected %d\n", case_name,
			re.calls, re.rc, expect);
	CHECK_EQ(re.calls, 1);
	CHECK_EQ(re.rc, expect);
	if (re.rc == 0 && (e == GET_MISS || e == GET_HIT))
		CHECK_EQ(mrcache_put(re.target, re.got), 0);
	/* Refused means untouched: the held region is still held. */
	if (!(re.rc == 0 && e == PUT))
		CHECK_EQ(mrcache_put(re.target, re.held), 0);
	CHECK_EQ(mrcache_destroy(c), 0);
	CHECK_EQ(test_backend_fini(&tb), 0);
	if (other) {
		CHECK_EQ(mrcache_destroy(other), 0);
		CHECK_EQ(test_backend_fini(&tbo), 0);
	}
	munmap(mem, 4 * PAGE);
	alarm(0);
}

/* Each case in a child, so that one hang does not hide the others. */
static void run_isolated(enum hook h, enum entry e, int on_other, int expect)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		test_failures = 0;
		signal(SIGALRM, watchdog);
		run_case(h, e, on_other, expect);
		_exit(test_result());
	}
	CHECK(pid > 0);
	if (pid > 0) {
		CHECK_EQ(waitpid(pid, &status, 0), pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

int main(void)
{
	for (int h = 0; h < HOOK_COUNT; h++)
		for (int e = 0; e < ENTRY_COUNT; e++)
			run_isolated(h, e, 0, -EDEADLK);
	/* Another cache is not this cache's lock. */
	run_isolated(ON_REG, GET_MISS, 1, 0);
	run_isolated(ON_DEREG, PUT, 1, 0);
	run_isolated(ON_INVALIDATE, INVALIDATE, 1, 1);
	run_isolated(ON_EVICT, FLUSH, 1, 0);
	return test_result();
}
