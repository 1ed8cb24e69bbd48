/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/uffd.c - the uffd monitor: userfaultfd's non-cooperative events.
 *
 * One userfaultfd per process (a range can be registered with one
 * userfaultfd only, so caches share it), one handler thread reading its
 * events, and the caches in hooks_uffd_caches.  Each watched range is
 * registered in write-protect mode without ever write-protecting a page:
 * no page fault is ever delivered (nothing to resolve, nothing that could
 * hang), yet the range's VMAs carry the userfaultfd, so the kernel reports:
 *
 *   UNMAP   munmap, mmap(MAP_FIXED) over, shmdt, brk shrink, mremap shrink
 *   REMOVE  madvise DONTNEED/FREE/REMOVE (sent before the pages are dropped)
 *   REMAP   mremap moving the range
 *
 * raw syscalls and glibc-internal calls included.  Not MADV_GUARD_INSTALL
 * (6.13+), which zaps the range with no event (checked on 6.18): only the
 * interposed madvise (hooks.h) reports it, a raw one goes unseen.  The
 * unmapping thread blocks until the handler read()s the event:
 *
 *   unmapping thread                  handler thread
 *   ----------------                  --------------
 *   munmap: unmap, queue event,       poll() -> readable
 *   sleep                             inflight = 1
 *                                     read() -> event   (wakes the unmapper)
 *   munmap returns                    mrc_cache_unmapped() on every cache
 *                                     inflight = 0
 *
 * So munmap can return a moment before its report.  `inflight` is set
 * before the read that releases the unmapping thread, so any get that
 * follows the munmap (in that thread, or in one it synchronised with)
 * sees it set, and settle() waits until the report is done; watch() waits
 * the same way, so no watch overlaps a report in progress.  Calls that come
 * through libmrcache's interposed definitions also report themselves
 * (hooks.h), which covers MADV_DONTNEED's report-before-zap for them.
 *
 * Registration is by whole VMAs: the VMAs a watched range lies in are
 * registered from their first byte to their last.  Registering part of a
 * VMA splits it, and mremap() refuses a range that spans several VMAs with
 * EFAULT, so a sub-range watch would break the application's own mremap()
 * of the whole mapping; a monitor must never change what the application's
 * calls return.  The price: an unmap or discard anywhere in such a VMA is
 * an event (reported precisely: only regions it overlaps are invalidated).
 * An unwatch unregisters each VMA the range lies in now, whole, when no
 * other watch lies in it.
 *
 * The watches are an interval tree (itree.h), so the handler's report, an
 * unwatch's coverage checks and a reclaim cost O(log n) each, not a walk
 * over every watch.  A watch whose range an UNMAP event covered has no
 * VMA left to unregister: its unwatch makes no system call.
 *
 * Locks: state.lock guards the descriptor, the handler's life and `users`
 * (start/stop; held while joining the handler, so the handler never takes
 * it).  state.spans_lock guards the span list (watch/unwatch, and the
 * handler's word clearing); it is held across UFFDIO_(UN)REGISTER and the
 * VMA queries, which take mmap_lock but never wait for the handler.
 * Order: cache->lock, then state.lock or spans_lock, then mmap_lock.
 * Every thread that waits for the handler (an unmapper blocked on its
 * event) holds no mmap_lock, no cache lock of ours and no spans_lock, so
 * the handler always progresses.  The handler's loop unmaps nothing (it
 * allocates nothing); it closes the descriptor before its thread exits,
 * since the exit unmaps memory that may share a registered VMA.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "cache/cache.h"
#include "monitor/hooks.h"
#include "monitor/itree.h"
#include "monitor/vma.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif

/* Tries of a registration whose VMAs change under it (register_range). */
#define REGISTER_ATTEMPTS 4

#define UFFD_NEEDED (UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | \
		     UFFD_FEATURE_EVENT_REMAP | UFFD_FEATURE_PAGEFAULT_FLAG_WP)

/* A registered range; watches of the same or overlapping ranges (a merged
 * region and the one it replaced, or two caches) each have one, and a
 * range is unregistered only where no other span covers it.  The node is
 * first: a tree node is its span. */
struct uffd_span {
	struct mrc_itree_node node;	/* [start, end) of the watch */
	uint64_t *word;		/* the watch's word, until unwatch */
	uint32_t unmapped;	/* an UNMAP event covered the whole range */
};

static struct {
	pthread_mutex_t lock;
	pthread_mutex_t spans_lock;
	int fd;			/* the userfaultfd, -1 when not open */
	int stop_fd;		/* eventfd: tells the handler to exit */
	int maps_fd;		/* /proc/self/maps, for VMA extents; -1: none */
	pthread_t handler;
	unsigned users;		/* caches using the monitor */
	pid_t pid;		/* the process that opened fd */
	uint64_t features;
	struct mrc_itree spans;	/* under spans_lock */
	uint32_t inflight;	/* atomic: handler holds unreported events */
	uint32_t running;	/* atomic: the handler reached its loop */
} state = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.spans_lock = PTHREAD_MUTEX_INITIALIZER,
	.fd = -1,
	.stop_fd = -1,
	.maps_fd = -1,
};

static uint64_t uffd_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

struct uffd_monitor {
	struct mrc_monitor base;
	int slot;
};

/* The child has no handler thread and, without UFFD_FEATURE_EVENT_FORK,
 * its VMAs carry no userfaultfd: start afresh if it creates a cache.  Its
 * copies of the parent's caches refuse every call and mrcache_destroy()
 * frees them without stopping their monitor: drop them from the table the
 * handler reports to, or the child's own handler thread reports into
 * freed memory (libmrcache-hooks does the same, but may not be linked). */
static void forget_in_child(void)
{
	memset(&hooks_uffd_caches, 0, sizeof(hooks_uffd_caches));
	if (state.fd >= 0)
		close(state.fd);
	if (state.stop_fd >= 0)
		close(state.stop_fd);
	if (state.maps_fd >= 0)
		close(state.maps_fd);
	state.fd = state.stop_fd = state.maps_fd = -1;
	state.users = 0;
	state.inflight = 0;
	state.running = 0;
	state.spans.root = NULL;
	pthread_mutex_init(&state.lock, NULL);
	pthread_mutex_init(&state.spans_lock, NULL);
}

static void atfork_install(void)
{
	pthread_atfork(NULL, NULL, forget_in_child);
}

struct unmapped_range {
	uintptr_t start, end;
	enum mrcache_cause cause;
};

static int span_clear(struct mrc_itree_node *n, void *arg)
{
	struct uffd_span *s = (struct uffd_span *)n;
	const struct unmapped_range *u = arg;

	__atomic_fetch_and(s->word, ~MRC_WORD_VALID, __ATOMIC_SEQ_CST);
	if (u->cause == MRCACHE_CAUSE_UNMAP && u->start <= n->start && n->end <= u->end)
		s->unmapped = 1;
	return 0;
}

/* Report [start, end) to every cache, and clear the word of every watch
 * of it: a region the cache has not put in its index yet (between watch()
 * and its index insertion) is invisible to mrc_cache_unmapped(), and its
 * userfaultfd registration went away with the old mapping, so its re-check
 * must fail.  spans_lock is never held while waiting for this thread. */
static void report(uintptr_t start, uintptr_t end, enum mrcache_cause cause)
{
	struct unmapped_range u = { start, end, cause };

	hooks_fanout_unmapped(&hooks_uffd_caches, start, end, cause);
	pthread_mutex_lock(&state.spans_lock);
	mrc_itree_overlaps(&state.spans, start, end, span_clear, &u);
	pthread_mutex_unlock(&state.spans_lock);
}

static void handle(const struct uffd_msg *m)
{
	switch (m->event) {
	case UFFD_EVENT_UNMAP:
		report(m->arg.remove.start, m->arg.remove.end, MRCACHE_CAUSE_UNMAP);
		break;
	case UFFD_EVENT_REMOVE:
		report(m->arg.remove.start, m->arg.remove.end, MRCACHE_CAUSE_DISCARD);
		break;
	case UFFD_EVENT_REMAP:
		report(m->arg.remap.from, m->arg.remap.from + m->arg.remap.len,
		       MRCACHE_CAUSE_REMAP);
		break;
	default:
		/* No page fault can come (nothing is write-protected) and
		 * no fork event was asked for. */
		break;
	}
}

/* Unmapping threads wait for this thread: it never gives up.  An error it
 * does not expect is reported once and retried after a pause. */
static void handler_trouble(const char *what, int err, int *reported)
{
	struct timespec pause = { 0, 1000000 };

	if (!*reported)
		mrc_log(0, "monitor uffd: %s: %s; retrying", what, strerror(err));
	*reported = 1;
	nanosleep(&pause, NULL);
}

static void *handler_main(void *arg)
{
	struct pollfd pfd[2] = {
		{ .fd = state.fd, .events = POLLIN },
		{ .fd = state.stop_fd, .events = POLLIN },
	};
	struct uffd_msg msgs[32];
	int reported = 0;

	__atomic_store_n(&state.running, 1, __ATOMIC_RELEASE);
	for (;;) {
		ssize_t n;

		if (poll(pfd, 2, -1) < 0) {
			if (errno != EINTR)
				handler_trouble("poll", errno, &reported);
			continue;
		}
		if (pfd[1].revents)
			break;
		__atomic_store_n(&state.inflight, 1, __ATOMIC_SEQ_CST);
		n = read(pfd[0].fd, msgs, sizeof(msgs));
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(msgs[0]); i++)
			handle(&msgs[i]);
		__atomic_store_n(&state.inflight, 0, __ATOMIC_RELEASE);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			handler_trouble("read", errno, &reported);
	}
	/* This thread's teardown unmaps memory (its stack from glibc's cache,
	 * a sanitizer's per-thread state) that may lie in a registered VMA:
	 * an event there would wait for this thread forever.  Closing first
	 * drops every registration and wakes any thread blocked on one. */
	close(state.fd);
	return NULL;
}

/* userfaultfd(2) for user-mode faults only (no privilege needed since
 * 5.11: we never take kernel-mode faults), else a full one (root,
 * CAP_SYS_PTRACE, or vm.unprivileged_userfaultfd=1), else /dev/userfaultfd
 * (6.1+, file permissions). */
static int uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	int dev;

	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 || errno != EPERM)
		return fd >= 0 ? fd : -errno;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -EPERM;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	close(dev);
	return fd >= 0 ? fd : -EPERM;
}

/* The features this kernel offers: a handshake on a throw-away fd, since
 * UFFDIO_API can be called once per fd. */
static int uffd_features(uint64_t *features)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = uffd_open();
	int rc = 0;

	if (fd < 0)
		return fd;
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		rc = -errno;
	close(fd);
	*features = api.features;
	return rc;
}

static int uffd_explain(int level, int rc)
{
	if (rc == -ENOSYS)
		mrc_log(level, "monitor uffd: the kernel has no userfaultfd (CONFIG_USERFAULTFD)");
	else if (rc == -EPERM)
		mrc_log(level, "monitor uffd: userfaultfd is not permitted: needs Linux 5.11+ "
			"for user-mode-only descriptors, or CAP_SYS_PTRACE, or "
			"vm.unprivileged_userfaultfd=1, or access to /dev/userfaultfd");
	else if (rc == -ENOTSUP)
		mrc_log(level, "monitor uffd: the kernel lacks unmap/remove/remap events "
			"or write-protect registration (Linux 5.7+)");
	else
		mrc_log(level, "monitor uffd: cannot open a userfaultfd: %s", strerror(-rc));
	return rc;
}

/* Open the process's userfaultfd and start the handler.  Under state.lock. */
static int uffd_open_state(int level)
{
	struct uffdio_api api = { .api = UFFD_API };
	uint64_t offered;
	sigset_t all, old;
	int rc = uffd_features(&offered);

	if (rc)
		return uffd_explain(level, rc);
	if ((offered & UFFD_NEEDED) != UFFD_NEEDED)
		return uffd_explain(level, -ENOTSUP);
	api.features = offered & (UFFD_NEEDED | UFFD_FEATURE_WP_HUGETLBFS_SHMEM);
	state.fd = uffd_open();
	if (state.fd < 0)
		return uffd_explain(level, state.fd);
	if (ioctl(state.fd, UFFDIO_API, &api) < 0) {
		rc = -errno;
		goto fail;
	}
	state.features = api.features;
	state.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (state.stop_fd < 0) {
		rc = -errno;
		goto fail;
	}
	state.maps_fd = mrc_vma_open();
	if (state.maps_fd < 0)
		mrc_log(1, "monitor uffd: cannot open /proc/self/maps (%s): watched "
			"ranges split their mappings, and mremap() of a whole "
			"mapping with a watched part fails", strerror(-state.maps_fd));
	/* The handler must not take the application's signals. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&state.handler, NULL, handler_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		goto fail;
	pthread_setname_np(state.handler, "mrcache-uffd");
	/* Started means running: the thread's own setup (its stack, a
	 * sanitizer's per-thread maps) is over before the first watch. */
	while (!__atomic_load_n(&state.running, __ATOMIC_ACQUIRE))
		sched_yield();
	state.pid = getpid();
	return 0;
fail:
	uffd_explain(level, rc);
	close(state.fd);
	if (state.stop_fd >= 0)
		close(state.stop_fd);
	if (state.maps_fd >= 0)
		close(state.maps_fd);
	state.fd = state.stop_fd = state.maps_fd = -1;
	return rc;
}

static void uffd_close_state(void)
{
	uint64_t one = 1;

	if (write(state.stop_fd, &one, sizeof(one)) != sizeof(one))
		mrc_log(0, "monitor uffd: cannot stop the handler: %s", strerror(errno));
	/* The handler closes the userfaultfd on its way out. */
	pthread_join(state.handler, NULL);
	state.running = 0;
	close(state.stop_fd);
	if (state.maps_fd >= 0)
		close(state.maps_fd);
	state.fd = state.stop_fd = state.maps_fd = -1;
}

static int uffd_start(struct mrcache *cache, struct mrc_monitor **out)
{
	int level = cache->cfg.monitor == MRCACHE_MONITOR_UFFD ? 0 : 1;
	struct uffd_monitor *m = calloc(1, sizeof(*m));
	int rc = 0;

	if (!m)
		return -ENOMEM;
	pthread_once(&atfork_once, atfork_install);
	pthread_mutex_lock(&state.lock);
	if (state.users == 0)
		rc = uffd_open_state(level);
	if (rc == 0) {
		m->slot = hooks_fanout_add(&hooks_uffd_caches, cache);
		if (m->slot < 0) {
			rc = m->slot;
			mrc_log(level, "monitor uffd: more than %d caches use it",
				HOOKS_FANOUT_SLOTS);
			if (state.users == 0)
				uffd_close_state();
		} else {
			state.users++;
		}
	}
	pthread_mutex_unlock(&state.lock);
	if (rc) {
		free(m);
		return rc;
	}
	*out = &m->base;
	return 0;
}

static void uffd_stop(struct mrc_monitor *mon)
{
	struct uffd_monitor *m = (struct uffd_monitor *)mon;

	hooks_fanout_remove(&hooks_uffd_caches, m->slot, m->base.cache);
	pthread_mutex_lock(&state.lock);
	if (state.users && --state.users == 0 && state.fd >= 0)
		uffd_close_state();
	pthread_mutex_unlock(&state.lock);
	free(m);
}

static void uffd_settle(struct mrc_monitor *mon)
{
	while (__atomic_load_n(&state.inflight, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* [*lo, *hi): the VMAs [start, end) lies in, whole; -ENOENT when nothing
 * is mapped at an end of the range.  Without /proc, the range itself. */
static int vma_extent(uintptr_t start, uintptr_t end, uintptr_t *lo, uintptr_t *hi)
{
	struct mrc_vma first, last;
	int rc;

	*lo = start;
	*hi = end;
	if (state.maps_fd < 0)
		return 0;
	rc = mrc_vma_query(state.maps_fd, start, 0, &first);
	last = first;
	if (rc == 0 && first.end < end)
		rc = mrc_vma_query(state.maps_fd, end - 1, 0, &last);
	if (rc == -ENOENT)
		return rc;
	if (rc == 0) {
		*lo = first.start;
		*hi = last.end;
	}
	return 0;
}

/* Whether [start, end) is mapped, under mmap_lock: msync fails with
 * ENOMEM where it is not. */
static int mapped(uintptr_t start, uintptr_t end)
{
	return msync((void *)start, end - start, MS_ASYNC) == 0;
}

/* UFFDIO_REGISTER the VMAs of the range.  It fails with EINVAL both for a
 * mapping userfaultfd cannot take and for a range with a hole (another
 * thread between munmap and mmap), and with ENOMEM where nothing is
 * mapped: tell them apart, since only the first may fall back to the
 * interposed calls.  The VMAs around the range may change between the
 * query and the registration (another thread mapping or unmapping next to
 * it leaves a hole in the extent, not in the range): look them up again,
 * and at the last attempt register the range itself (a split, rather than
 * a watch lost to neighbours that keep changing).  0, -EFAULT (not
 * mapped), or -errno. */
static int register_range(uintptr_t start, uintptr_t end)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	uintptr_t lo = start, hi = end;

	for (int attempt = 0; attempt < REGISTER_ATTEMPTS; attempt++) {
		if (attempt == REGISTER_ATTEMPTS - 1) {
			lo = start;
			hi = end;
		} else if (vma_extent(start, end, &lo, &hi)) {
			/* PROCMAP_QUERY reads without mmap_lock and can miss
			 * a VMA another thread is replacing (seen on 6.18). */
			if (!mapped(start, end))
				return -EFAULT;
			continue;
		}
		reg.range.start = lo;
		reg.range.len = hi - lo;
		if (ioctl(state.fd, UFFDIO_REGISTER, &reg) == 0)
			return 0;
		if (errno != EINVAL && errno != ENOMEM)
			return -errno;
		if (!mapped(start, end))
			return -EFAULT;
	}
	return -EINVAL;
}

/*
 * An application thread holds spans_lock with every signal blocked.  A
 * signal handler that unmaps watched memory waits in the kernel until the
 * handler thread reads the event; if its thread held spans_lock and the
 * handler thread was waiting for that lock to report an earlier event
 * (another thread's), neither could go on (issue 25 item 7: hung under
 * 50-200 us timers in tests/test-stale-threads, "signal").  Two
 * pthread_sigmask calls per watch and unwatch, beside their ioctls.
 */
static void spans_lock_app(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, old);
	pthread_mutex_lock(&state.spans_lock);
}

static void spans_unlock_app(const sigset_t *old)
{
	pthread_mutex_unlock(&state.spans_lock);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static int uffd_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		      uint64_t cookie, struct mrc_watch *w)
{
	struct uffd_span *s = malloc(sizeof(*s));
	sigset_t old;
	uint64_t gen;
	int rc;

	if (!s)
		return -ENOMEM;
	/* An event read but not yet reported may concern this range. */
	uffd_settle(mon);
	/* The word is valid before the span is visible to the handler,
	 * which may clear it from then on. */
	gen = __atomic_add_fetch(&uffd_generation, 1, __ATOMIC_RELAXED);
	w->expected = MRC_WORD(gen);
	w->word = &w->local;
	w->token = 0;
	__atomic_store_n(&w->local, w->expected, __ATOMIC_SEQ_CST);

	spans_lock_app(&old);
	rc = register_range(start, end);
	if (rc) {
		spans_unlock_app(&old);
		free(s);
		/* EINVAL: a mapping userfaultfd cannot watch (SysV shm,
		 * file-backed, VM_PFNMAP...); EBUSY: another userfaultfd has
		 * it.  The interposed calls still report to uffd caches: fall
		 * back to them for this range when they work. */
		if ((rc != -EINVAL && rc != -EBUSY) || hooks_interposed()) {
			mrc_log(1, "monitor uffd: cannot watch [%#lx, %#lx): %s",
				(unsigned long)start, (unsigned long)end, strerror(-rc));
			return rc == -EINVAL || rc == -EBUSY ? -EOPNOTSUPP : rc;
		}
		mrc_log(1, "monitor uffd: [%#lx, %#lx) is %s: watched by the "
			"interposed calls only", (unsigned long)start, (unsigned long)end,
			rc == -EINVAL ? "a mapping userfaultfd cannot register"
				      : "registered with another userfaultfd");
		return 0;
	}
	s->node.start = start;
	s->node.end = end;
	s->word = &w->local;
	s->unmapped = 0;
	mrc_itree_insert(&state.spans, &s->node);
	w->token = (uint64_t)(uintptr_t)s;
	spans_unlock_app(&old);
	return 0;
}

static void unregister(uintptr_t start, uintptr_t end)
{
	struct uffdio_range range = { .start = start, .len = end - start };

	/* The range may be gone or remapped since: errors only mean there
	 * is nothing of ours left there. */
	if (ioctl(state.fd, UFFDIO_UNREGISTER, &range) < 0)
		mrc_log(2, "monitor uffd: unregister [%#lx, %#lx): %s",
			(unsigned long)start, (unsigned long)end, strerror(errno));
}

/* The spans overlapping [*pos, end) come in start order: unregister the
 * gap before each, then move past it. */
static int unregister_gap(struct mrc_itree_node *n, void *arg)
{
	uintptr_t *pos = arg;

	if (n->start > *pos)
		unregister(*pos, n->start);
	if (n->end > *pos)
		*pos = n->end;
	return 0;
}

/* Unregister the parts of [start, end) no remaining span covers. */
static void unregister_uncovered(uintptr_t start, uintptr_t end)
{
	uintptr_t pos = start;

	mrc_itree_overlaps(&state.spans, start, end, unregister_gap, &pos);
	if (pos < end)
		unregister(pos, end);
}

static int found(struct mrc_itree_node *n, void *arg)
{
	return 1;
}

static int span_overlaps(uintptr_t start, uintptr_t end)
{
	return mrc_itree_overlaps(&state.spans, start, end, found, NULL);
}

/* Unregister, whole, each VMA [start, end) lies in now that no remaining
 * span lies in.  Without /proc, the parts of the range no span covers. */
static void unregister_unused(uintptr_t start, uintptr_t end)
{
	struct mrc_vma v;

	if (state.maps_fd < 0) {
		unregister_uncovered(start, end);
		return;
	}
	while (start < end && mrc_vma_query(state.maps_fd, start, MRC_VMA_OR_NEXT, &v) == 0 &&
	       v.start < end) {
		if (!span_overlaps(v.start, v.end))
			unregister(v.start, v.end);
		start = v.end;
	}
}

/* Under spans_lock.  A span an UNMAP covered lies in no VMA any more:
 * whatever is mapped there now came after, and is registered only if a
 * watch of its own (another span) lies in it. */
static void span_remove(struct mrc_watch *w)
{
	struct uffd_span *s = (struct uffd_span *)(uintptr_t)w->token;

	__atomic_fetch_and(&w->local, ~MRC_WORD_VALID, __ATOMIC_RELAXED);
	if (!s)
		return;
	w->token = 0;
	mrc_itree_remove(&state.spans, &s->node);
	if (!s->unmapped && state.fd >= 0 && state.pid == getpid())
		unregister_unused(s->node.start, s->node.end);
	free(s);
}

static void uffd_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	sigset_t old;

	spans_lock_app(&old);
	span_remove(w);
	spans_unlock_app(&old);
}

/* Reclaim's batches: the lock once for all. */
static void uffd_unwatch_many(struct mrc_monitor *mon, struct mrc_watch *const *w, unsigned n)
{
	sigset_t old;

	spans_lock_app(&old);
	for (unsigned i = 0; i < n; i++)
		span_remove(w[i]);
	spans_unlock_app(&old);
}

const struct mrc_monitor_ops mrc_monitor_uffd_ops = {
	.kind = MRCACHE_MONITOR_UFFD,
	.name = "uffd",
	.start = uffd_start,
	.stop = uffd_stop,
	.watch = uffd_watch,
	.unwatch = uffd_unwatch,
	.unwatch_many = uffd_unwatch_many,
	.settle = uffd_settle,
};
