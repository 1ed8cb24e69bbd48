/* SPDX-License-Identifier: MIT */
/*
 * monitor_bpf.c - the bpf monitor: the kernel-side protocol of the mrmon
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
 * fork: the child inherits the descriptors of the links, programs and maps,
 * and a link stays attached while any process holds it: every system call
 * of every process would keep paying the filter for as long as a forked
 * worker lives, after the parent's mrcache_destroy().  The child cannot use
 * the parent's caches (-ECHILD), so an atfork child handler releases every
 * live monitor's kernel objects there (live_lock is held across fork, so the
 * child never sees the list half updated).
 */
#include <errno.h>
#include "monitor_bpf.h"

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
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "mrc_monitor.skel.h"

#define WATCH_BUSY_RETRIES 1000

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

/* Every started monitor, for the atfork child handler. */
static struct mrc_bpf_mon live = { .prev = &live, .next = &live };
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void)
{
	pthread_mutex_lock(&live_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&live_lock);
}

/* The links, programs, maps and their mappings go; the rest of the
 * monitor's memory is the parent's copy, freed by no one (as the cache's
 * own: mrcache_destroy() in a child stops no monitor). */
static void fork_child(void)
{
	for (struct mrc_bpf_mon *m = live.next; m != &live; m = m->next) {
		ring_buffer__free(m->rb);
		m->rb = NULL;
		mrc_bpf_unload(m);
	}
	live.next = live.prev = &live;
	pthread_mutex_unlock(&live_lock);
}

static void atfork_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void list_add(struct mrc_bpf_mon *m)
{
	pthread_once(&atfork_once, atfork_install);
	pthread_mutex_lock(&live_lock);
	m->next = live.next;
	m->prev = &live;
	live.next->prev = m;
	live.next = m;
	pthread_mutex_unlock(&live_lock);
}

static void list_del(struct mrc_bpf_mon *m)
{
	pthread_mutex_lock(&live_lock);
	m->prev->next = m->next;
	m->next->prev = m->prev;
	pthread_mutex_unlock(&live_lock);
	m->next = m->prev = NULL;
}

static struct mrc_bpf_mon *to_bpf(struct mrc_monitor *mon)
{
	return (struct mrc_bpf_mon *)mon;
}

static int alloc_slot(struct mrc_bpf_mon *m, uint32_t *id)
{
	if (!m->nfree)
		return -ENOSPC;
	*id = m->free_ids[--m->nfree];
	return 0;
}

/* Set the word and learn the file range; the vma lookup only try-locks
 * mmap_lock, so retry while an mmap/munmap holds it. */
static int arm_slot(struct mrc_bpf_mon *m, struct mrc_bpf_watch_args *a)
{
	int i, err;

	for (i = 0; i < WATCH_BUSY_RETRIES; i++) {
		err = mrc_bpf_run_watch(m, a);
		if (err || a->err != -EBUSY)
			return err;
		sched_yield();
	}
	return -EAGAIN;
}

int mrc_bpf_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		  uint64_t cookie, struct mrc_watch *w)
{
	struct mrc_bpf_mon *m = to_bpf(mon);
	struct mrc_bpf_watch_args a = { .start = start, .end = end };
	struct mrc_bpf_slot *s;
	struct mrc_bpf_watch *wt;
	uint32_t id;
	int err;

	if (start >= end || ((start | end) & 4095) ||
	    mrc_bpf_level(end - start) >= MRC_BPF_LEVELS)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	err = alloc_slot(m, &id);
	if (err)
		goto out;
	wt = &m->watches[id];
	a.slot = id;
	a.word = MRC_WORD(wt->gen + 1);
	err = arm_slot(m, &a);
	if (err)
		goto put_back;
	s = &m->ix.slots[id];
	s->start = start;
	s->level = mrc_bpf_level(end - start);
	s->fmap = a.fmap;
	s->fstart = a.fstart;
	s->fend = a.fend;
	s->flevel = a.fmap ? mrc_bpf_level(a.fend - a.fstart) : 0;
	__atomic_store_n(&s->end, end, __ATOMIC_RELEASE);
	err = mrc_bpf_index_insert(&m->ix, id);
	if (err) {
		__atomic_store_n(&s->end, 0, __ATOMIC_RELEASE);
		goto put_back;
	}
	wt->gen++;
	wt->cookie = cookie;
	wt->start = start;
	wt->end = end;
	wt->used = 1;
	w->word = &m->words[id];
	w->expected = a.word;
	w->token = id;
	goto out;
put_back:
	m->free_ids[m->nfree++] = id;
out:
	pthread_mutex_unlock(&m->lock);
	return err;
}

void mrc_bpf_unwatch(struct mrc_monitor *mon, struct mrc_watch *w)
{
	struct mrc_bpf_mon *m = to_bpf(mon);
	uint32_t id = (uint32_t)w->token;

	if (id == MRC_BPF_EPOCH_SLOT || id >= MRC_BPF_SLOTS)
		return;
	pthread_mutex_lock(&m->lock);
	if (m->watches[id].used) {
		mrc_bpf_index_remove(&m->ix, id);
		__atomic_store_n(&m->ix.slots[id].end, 0, __ATOMIC_RELEASE);
		m->watches[id].used = 0;
		m->free_ids[m->nfree++] = id;
	}
	pthread_mutex_unlock(&m->lock);
	w->word = NULL;
}

/* The address space went away: every watch is gone. */
static void report_all(struct mrc_bpf_mon *m, enum mrcache_cause cause)
{
	uint32_t id;

	for (id = 1; id < MRC_BPF_SLOTS; id++) {
		struct mrc_bpf_watch wt;

		pthread_mutex_lock(&m->lock);
		wt = m->watches[id];
		pthread_mutex_unlock(&m->lock);
		if (wt.used) {
			mrc_cache_event(m->base.cache, wt.cookie, wt.start, wt.end, cause);
			m->reported++;
		}
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct mrc_bpf_mon *m = ctx;
	const struct mrc_bpf_event *ev = data;
	struct mrc_bpf_watch wt;

	if (size < sizeof(*ev) || ev->slot >= MRC_BPF_SLOTS)
		return 0;
	if (ev->slot == MRC_BPF_EPOCH_SLOT) {
		report_all(m, MRCACHE_CAUSE_EXIT);
		return 0;
	}
	pthread_mutex_lock(&m->lock);
	wt = m->watches[ev->slot];
	pthread_mutex_unlock(&m->lock);
	if (!wt.used || wt.gen != ev->old_word >> 1 || ev->cause >= MRCACHE_CAUSE_COUNT_)
		return 0;
	mrc_cache_event(m->base.cache, wt.cookie, wt.start, wt.end, ev->cause);
	m->reported++;
	return 0;
}

static int bpf_drain(struct mrc_monitor *mon)
{
	struct mrc_bpf_mon *m = to_bpf(mon);
	struct mrc_bpf_ctl *ctl = m->ix.ctl;

	m->reported = 0;
	__atomic_store_n(&ctl->pending, 0, __ATOMIC_SEQ_CST);
	ring_buffer__consume(m->rb);
	if (__atomic_exchange_n(&ctl->lost, 0, __ATOMIC_ACQ_REL)) {
		mrc_log(1, "monitor bpf: event ring overflowed; rescanning");
		mrc_cache_rescan(m->base.cache);
	}
	return m->reported;
}

static int bpf_pending(struct mrc_monitor *mon)
{
	return __atomic_load_n(&to_bpf(mon)->ix.ctl->pending, __ATOMIC_ACQUIRE);
}

static void bpf_stop(struct mrc_monitor *mon)
{
	struct mrc_bpf_mon *m = to_bpf(mon);

	if (!m)
		return;
	if (m->next)
		list_del(m);
	ring_buffer__free(m->rb);
	if (m->skel)
		mrc_bpf_unload(m);
	pthread_mutex_destroy(&m->lock);
	free(m->watches);
	free(m->free_ids);
	free(m);
}

static int bpf_start(struct mrcache *cache, struct mrc_monitor **out)
{
	struct mrc_bpf_mon *m;
	uint32_t id;
	int err = may_load();

	if (err)
		return err;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base.ops = &mrc_monitor_bpf_ops;
	m->base.cache = cache;
	pthread_mutex_init(&m->lock, NULL);
	m->watches = calloc(MRC_BPF_SLOTS, sizeof(*m->watches));
	m->free_ids = calloc(MRC_BPF_SLOTS, sizeof(*m->free_ids));
	if (!m->watches || !m->free_ids) {
		err = -ENOMEM;
		goto fail;
	}
	/* Hand out low ids first: the programs' slot walk stops at nslots. */
	for (id = MRC_BPF_SLOTS - 1; id > MRC_BPF_EPOCH_SLOT; id--)
		m->free_ids[m->nfree++] = id;
	err = mrc_bpf_load(m);
	if (err)
		goto fail;
	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.events), on_event, m, NULL);
	if (!m->rb) {
		err = -errno ? -errno : -ENOMEM;
		mrc_log(0, "monitor bpf: opening the event ring: %s", strerror(-err));
		goto fail;
	}
	err = mrc_bpf_selftest(m);
	if (err)
		goto fail;
	list_add(m);
	*out = &m->base;
	return 0;
fail:
	bpf_stop(&m->base);
	return err;
}

const struct mrc_monitor_ops mrc_monitor_bpf_ops = {
	.kind = MRCACHE_MONITOR_BPF,
	.name = "bpf",
	.start = bpf_start,
	.stop = bpf_stop,
	.watch = mrc_bpf_watch,
	.unwatch = mrc_bpf_unwatch,
	.drain = bpf_drain,
	.pending = bpf_pending,
};
#endif
