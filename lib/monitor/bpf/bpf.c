/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/bpf.c - the bpf monitor: the kernel-side protocol of the mrmon
 * module, done by eBPF programs on a stock kernel (bpf/mrc_monitor.bpf.c).
 *
 *   cache (miss, under cache->lock)      library (here)          programs
 *   -------------------------------      --------------          --------
 *   watch(range)                         slot, new generation;
 *                                        mrc_watch: word = gen<<1|1,
 *                                        file range behind it;
 *                                        publish in the index    from now on an unmap of
 *                                                                 the range clears bit 0
 *   backend reg(range)                                            of the word (after the
 *   load_acquire(word) == expected?                               page tables changed,
 *                                                                 before the call returns)
 *                                                                 and queues {slot, word}
 *   drain() (under cache->lock)          ring buffer -> cookie;
 *                                        mrc_cache_event()
 *
 * The programs run after the change, so a watch published while an unmap
 * is in progress is either seen by the program (word cleared) or was
 * published after the page tables changed, and the registration that
 * follows pins what is mapped now: watch() needs no wait.
 *
 * A slot reused for a new watch gets a new generation; an event whose
 * generation is not the slot's current one is stale and dropped.
 *
 * Every cache of the process shares one program set (monitor/bpf/set.c):
 * one index, one event ring.  Each slot names the cache that watches it.
 * A drain() reads the whole ring and puts each event in its owner's queue;
 * then it reports its own queue's.  The drains of two caches take turns
 * on the ring (ring_lock), and an event for a cache whose lock is not held
 * waits in that cache's queue, which its pending() shows.  A full ring
 * (ctl->lost), or a full queue, makes the caches concerned rescan.
 */
#include <errno.h>
#include "monitor/bpf/bpf.h"

#ifndef MRC_HAVE_BPF
static int bpf_start(struct mrcache *cache, struct mrc_monitor **out)
{
	mrc_log(0, "monitor bpf: this build has no libbpf "
		"(install clang, libbpf-dev, bpftool and rebuild)");
	return -ENOTSUP;
}

const struct mrc_monitor_ops mrc_monitor_bpf_ops = {
	.kind = MRCACHE_MONITOR_BPF,
	.name = "bpf",
	.start = bpf_start,
};
#else
#include <linux/capability.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WATCH_BUSY_YIELDS 64
#define WATCH_BUSY_SLEEP_MAX_NS 1000000

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* Tracing programs load with CAP_BPF and CAP_PERFMON (Linux 5.8+) or with
 * CAP_SYS_ADMIN, whatever kernel.unprivileged_bpf_disabled says: bpf()
 * without them never loads that kind.  Asking for the effective set first
 * spares a process without them libbpf's reading of the kernel's BTF and
 * two refused loads (100-200 ms).  Capabilities that do not count for bpf
 * (a user namespace's) pass here; the load then fails as before. */
static int may_load(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	uint64_t eff;

	if (syscall(SYS_capget, &hdr, d))
		return 0;	/* cannot tell: the load will */
	eff = d[0].effective | (uint64_t)d[1].effective << 32;
	if ((eff & (1ull << CAP_SYS_ADMIN)) ||
	    ((eff & (1ull << CAP_BPF)) && (eff & (1ull << CAP_PERFMON))))
		return 0;
	mrc_log(0, "monitor bpf: loading the programs needs CAP_BPF and CAP_PERFMON "
		"(or CAP_SYS_ADMIN), which this process does not have");
	return -EPERM;
}

static struct mrc_bpf_mon *to_bpf(struct mrc_monitor *mon)
{
	return (struct mrc_bpf_mon *)mon;
}

static int alloc_slot(struct mrc_bpf_set *s, uint32_t *id)
{
	if (!s->nfree)
		return -ENOSPC;
	*id = s->free_ids[--s->nfree];
	return 0;
}

/*
 * Set the word and learn the file range.  The vma lookup only try-locks
 * mmap_lock, which every mmap, munmap, mremap and fork of another thread
 * holds for a moment (a fork for as long as it copies the address space):
 * retry, yielding first, then sleeping longer each time (up to 1 ms), for
 * as long as it takes.  A get of a stable, mapped range must not fail
 * because other threads map memory (it returned EAGAIN after 1,000 tries).
 */
static int arm_slot(struct mrc_bpf_set *s, struct mrc_bpf_watch_args *a)
{
	struct timespec pause = { 0, 1000 };
	unsigned i;
	int err;

	for (i = 0;; i++) {
		err = mrc_bpf_run_watch(s, a);
		if (err || a->err != -EBUSY)
			break;
		if (i < WATCH_BUSY_YIELDS) {
			sched_yield();
			continue;
		}
		nanosleep(&pause, NULL);
		if (pause.tv_nsec < WATCH_BUSY_SLEEP_MAX_NS)
			pause.tv_nsec *= 2;
	}
	if (i >= WATCH_BUSY_YIELDS)
		mrc_log(MRCACHE_LOG_DEBUG, "monitor bpf: watching [%#lx, %#lx) waited for "
			"mmap_lock (%u tries)", (unsigned long)a->start, (unsigned long)a->end, i + 1);
	return err;
}

int mrc_bpf_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		  uint64_t cookie, struct mrc_watch *w)
{
	struct mrc_bpf_mon *m = to_bpf(mon);
	struct mrc_bpf_set *s = m->set;
	struct mrc_bpf_watch_args a = { .start = start, .end = end };
	struct mrc_bpf_slot *sl;
	struct mrc_bpf_watch *wt;
	uint32_t id;
	int err;

	if (start >= end || ((start | end) & 4095) ||
	    mrc_bpf_level(end - start) >= MRC_BPF_LEVELS)
		return -EINVAL;
	pthread_mutex_lock(&s->lock);
	err = alloc_slot(s, &id);
	if (err)
		goto out;
	wt = &s->watches[id];
	a.slot = id;
	a.word = MRC_WORD(wt->gen + 1);
	err = arm_slot(s, &a);
	if (err)
		goto put_back;
	sl = &s->ix.slots[id];
	sl->start = start;
	sl->level = mrc_bpf_level(end - start);
	sl->fmap = a.fmap;
	sl->fstart = a.fstart;
	sl->fend = a.fend;
	sl->flevel = a.fmap ? mrc_bpf_level(a.fend - a.fstart) : 0;
	__atomic_store_n(&sl->end, end, __ATOMIC_RELEASE);
	err = mrc_bpf_index_insert(&s->ix, id);
	if (err) {
		__atomic_store_n(&sl->end, 0, __ATOMIC_RELEASE);
		goto put_back;
	}
	wt->gen++;
	wt->owner = m;
	wt->cookie = cookie;
	wt->start = start;
	wt->end = end;
	wt->used = 1;
	w->word = &s->words[id];
	w->expected = a.word;
	w->token = id;
	goto out;
put_back:
	s->free_ids[s->nfree++] = id;
out:
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* Under s->lock. */
static void slot_release(struct mrc_bpf_set *s, uint32_t id)
{
	mrc_bpf_index_remove(&s->ix, id);
	__atomic_store_n(&s->ix.slots[id].end, 0, __ATOMIC_RELEASE);
	s->watches[id].used = 0;
	s->watches[id].owner = NULL;
	s->free_ids[s->nfree++] = id;
}

/* Under s->lock: give w's slot back if m owns it. */
static void unwatch_locked(struct mrc_bpf_mon *m, struct mrc_watch *w)
{
	struct mrc_bpf_set *s = m->set;
	uint32_t id = (uint32_t)w->token;

	if (id == MRC_BPF_EPOCH_SLOT || id >= MRC_BPF_SLOTS)
		return;
	if (s->watches[id].used && s->watches[id].owner == m)
		slot_release(s, id);
	w->word = NULL;
}

void mrc_bpf_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	struct mrc_bpf_mon *m = to_bpf(mon);

	pthread_mutex_lock(&m->set->lock);
	unwatch_locked(m, w);
	pthread_mutex_unlock(&m->set->lock);
}

/* A reclaim's batch under one lock of the set, not one per watch. */
static void bpf_unwatch_many(struct mrc_monitor *mon, struct mrc_watch *const *w,
			     unsigned n)
{
	struct mrc_bpf_mon *m = to_bpf(mon);

	pthread_mutex_lock(&m->set->lock);
	for (unsigned i = 0; i < n; i++)
		unwatch_locked(m, w[i]);
	pthread_mutex_unlock(&m->set->lock);
}

/* Under s->lock: m has something for its drain(). */
static void mark_queued(struct mrc_bpf_mon *m)
{
	__atomic_store_n(&m->queued, 1, __ATOMIC_RELEASE);
}

/* Under s->lock: one event of the ring to the queue of the slot's owner. */
static void route_one(void *arg, const void *data, size_t size)
{
	struct mrc_bpf_set *s = arg;
	const struct mrc_bpf_event *ev = data;
	struct mrc_bpf_watch *wt;
	struct mrc_bpf_mon *m;

	if (size < sizeof(*ev) || ev->slot >= MRC_BPF_SLOTS)
		return;
	if (ev->slot == MRC_BPF_EPOCH_SLOT) {
		for (m = s->mons.next; m != &s->mons; m = m->next) {
			m->epoch = 1;
			mark_queued(m);
		}
		return;
	}
	wt = &s->watches[ev->slot];
	m = wt->owner;
	if (!wt->used || !m || !m->queue || wt->gen != ev->old_word >> 1)
		return;
	if (m->qcount == MRC_BPF_QUEUE)
		m->lost = 1;
	else
		m->queue[(m->qhead + m->qcount++) % MRC_BPF_QUEUE] = *ev;
	mark_queued(m);
}

void mrc_bpf_route(struct mrc_bpf_set *s)
{
	pthread_mutex_lock(&s->ring_lock);
	__atomic_store_n(&s->ix.ctl->pending, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&s->lock);
	mrc_bpf_ring_consume(&s->ring, route_one, s);
	if (__atomic_exchange_n(&s->ix.ctl->lost, 0, __ATOMIC_ACQ_REL)) {
		mrc_log(1, "monitor bpf: event ring overflowed; rescanning");
		for (struct mrc_bpf_mon *m = s->mons.next; m != &s->mons; m = m->next) {
			m->lost = 1;
			mark_queued(m);
		}
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_unlock(&s->ring_lock);
}

/* The address space went away: every watch of m's is gone. */
static void report_all(struct mrc_bpf_mon *m, enum mrcache_cause cause)
{
	struct mrc_bpf_set *s = m->set;

	for (uint32_t id = 1; id < MRC_BPF_SLOTS; id++) {
		struct mrc_bpf_watch wt;

		pthread_mutex_lock(&s->lock);
		wt = s->watches[id];
		pthread_mutex_unlock(&s->lock);
		if (wt.used && wt.owner == m) {
			mrc_cache_event(m->base.cache, wt.cookie, wt.start, wt.end, cause);
			m->reported++;
		}
	}
}

/* Events report_queue() takes from the queue under one lock. */
#define QUEUE_POP_BATCH 64

/* Take up to QUEUE_POP_BATCH events of m's queue, each with the watch it
 * names as it is now; returns how many (0: the queue is empty). */
static unsigned queue_pop(struct mrc_bpf_mon *m, struct mrc_bpf_event *ev,
			  struct mrc_bpf_watch *wt)
{
	struct mrc_bpf_set *s = m->set;
	unsigned n = 0;

	pthread_mutex_lock(&s->lock);
	for (; m->qcount && n < QUEUE_POP_BATCH; n++) {
		ev[n] = m->queue[m->qhead];
		m->qhead = (m->qhead + 1) % MRC_BPF_QUEUE;
		m->qcount--;
		wt[n] = s->watches[ev[n].slot];
	}
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* Flags first: an epoch or a rescan covers the queued events too. */
static void report_queue(struct mrc_bpf_mon *m)
{
	struct mrc_bpf_set *s = m->set;
	struct mrc_bpf_event ev[QUEUE_POP_BATCH];
	struct mrc_bpf_watch wt[QUEUE_POP_BATCH];
	unsigned n;
	int epoch, lost;

	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&m->queued, 0, __ATOMIC_RELAXED);
	epoch = m->epoch;
	lost = m->lost;
	m->epoch = m->lost = 0;
	pthread_mutex_unlock(&s->lock);
	if (epoch)
		report_all(m, MRCACHE_CAUSE_EXIT);
	if (lost)
		mrc_cache_rescan(m->base.cache);
	while ((n = queue_pop(m, ev, wt)) > 0) {
		for (unsigned i = 0; i < n; i++) {
			if (!wt[i].used || wt[i].owner != m || wt[i].gen != ev[i].old_word >> 1 ||
			    ev[i].cause >= MRCACHE_CAUSE_COUNT_)
				continue;
			mrc_cache_event(m->base.cache, wt[i].cookie, wt[i].start, wt[i].end,
					ev[i].cause);
			m->reported++;
		}
	}
}

static int bpf_drain(struct mrc_monitor *mon)
{
	struct mrc_bpf_mon *m = to_bpf(mon);

	m->reported = 0;
	mrc_bpf_route(m->set);
	if (__atomic_load_n(&m->queued, __ATOMIC_ACQUIRE))
		report_queue(m);
	return m->reported;
}

static int bpf_pending(struct mrc_monitor *mon)
{
	struct mrc_bpf_mon *m = to_bpf(mon);

	return __atomic_load_n(&m->ctl->pending, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&m->queued, __ATOMIC_ACQUIRE);
}

/* Slots m still owns go back (a cache unwatches every region before it
 * stops its monitor, so normally none). */
static void mon_unlink(struct mrc_bpf_mon *m)
{
	struct mrc_bpf_set *s = m->set;

	pthread_mutex_lock(&s->lock);
	for (uint32_t id = 1; id < MRC_BPF_SLOTS; id++)
		if (s->watches[id].used && s->watches[id].owner == m)
			slot_release(s, id);
	m->prev->next = m->next;
	m->next->prev = m->prev;
	pthread_mutex_unlock(&s->lock);
}

static void bpf_stop(struct mrc_monitor *mon)
{
	struct mrc_bpf_mon *m = to_bpf(mon);

	if (!m)
		return;
	if (m->set) {
		if (m->next)
			mon_unlink(m);
		mrc_bpf_set_put(m->set);
	}
	mrc_bpf_pages_free(m->queue, MRC_BPF_QUEUE * sizeof(*m->queue));
	free(m);
}

static int bpf_start(struct mrcache *cache, struct mrc_monitor **out)
{
	struct mrc_bpf_mon *m;
	struct mrc_bpf_set *s;
	int err = may_load();

	if (err)
		return err;
	if (mrc_bpf_preemptible())
		return -EOPNOTSUPP;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base.ops = &mrc_monitor_bpf_ops;
	m->base.cache = cache;
	m->queue = mrc_bpf_pages_alloc(MRC_BPF_QUEUE * sizeof(*m->queue));
	err = m->queue ? mrc_bpf_set_get(&m->set) : -ENOMEM;
	if (err) {
		bpf_stop(&m->base);
		return err;
	}
	s = m->set;
	m->ctl = s->ix.ctl;
	pthread_mutex_lock(&s->lock);
	m->next = s->mons.next;
	m->prev = &s->mons;
	s->mons.next->prev = m;
	s->mons.next = m;
	pthread_mutex_unlock(&s->lock);
	*out = &m->base;
	return 0;
}

const struct mrc_monitor_ops mrc_monitor_bpf_ops = {
	.kind = MRCACHE_MONITOR_BPF,
	.name = "bpf",
	.start = bpf_start,
	.stop = bpf_stop,
	.watch = mrc_bpf_watch,
	.unwatch = mrc_bpf_unwatch,
	.unwatch_many = bpf_unwatch_many,
	.drain = bpf_drain,
	.pending = bpf_pending,
};
#endif
