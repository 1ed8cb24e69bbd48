// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_mm.c - how many watches one address space holds, and how much of
 * it they cover, across all its descriptors.
 *
 * The span of the watches (the bytes they cover, overlaps counted each
 * time) is charged as the registrations they protect would be: pinned
 * memory is charged to the mm against RLIMIT_MEMLOCK (ib_umem_get()), so
 * the mm's watched span is bounded by the same limit, with a floor
 * (span_floor_mb) so a small limit still caches something, and by
 * max_span_per_mm_gb where RLIMIT_MEMLOCK is unlimited (RDMA clusters).
 * Openers with CAP_IPC_LOCK are not limited by the span.  The count of
 * watches is capped by max_watches_per_mm whatever the limits.  Each
 * descriptor compares against the limits it read at open
 * (struct mrmon_limits).
 *
 * The counts live in a small table keyed by the mm, one entry per mm with
 * an open descriptor; mrmon_mm_lock (a mutex: open and release only)
 * guards the table and the entries' refs, the count itself is atomic.
 */
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include "mrmon.h"

struct mrmon_mm_count {
	struct hlist_node node;		/* mrmon_mm_table, under mrmon_mm_lock */
	struct mm_struct *mm;		/* the key; never dereferenced */
	unsigned int refs;		/* descriptors; under mrmon_mm_lock */
	atomic_t watches;
	atomic64_t span;		/* bytes the watches cover */
};

static DEFINE_HASHTABLE(mrmon_mm_table, 6);
static DEFINE_MUTEX(mrmon_mm_lock);

/**
 * mrmon_mm_get() - the watch count of an mm, for a new descriptor
 * @mm: the opener's
 *
 * Return: the entry (one reference taken), ERR_PTR(-ENOMEM) without
 * memory, ERR_PTR(-EINTR) on a fatal signal.
 */
struct mrmon_mm_count *mrmon_mm_get(struct mm_struct *mm)
{
	struct mrmon_mm_count *c;

	if (mutex_lock_killable(&mrmon_mm_lock))
		return ERR_PTR(-EINTR);
	hash_for_each_possible(mrmon_mm_table, c, node, (unsigned long)mm)
		if (c->mm == mm)
			goto found;
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c) {
		c = ERR_PTR(-ENOMEM);
		goto out;
	}
	c->mm = mm;
	hash_add(mrmon_mm_table, &c->node, (unsigned long)mm);
found:
	c->refs++;
out:
	mutex_unlock(&mrmon_mm_lock);
	return c;
}

/* A descriptor is gone; its watches were given back before. */
void mrmon_mm_put(struct mrmon_mm_count *c)
{
	mutex_lock(&mrmon_mm_lock);
	if (!--c->refs) {
		hash_del(&c->node);
		kfree(c);
	}
	mutex_unlock(&mrmon_mm_lock);
}

/**
 * mrmon_mm_watch_add() - one more watch of the mm, covering @span bytes
 * @c: the mm's count
 * @lim: the descriptor's limits
 * @span: the watch's bytes
 *
 * Context: any; atomics only (called under ctx->lock).
 *
 * Return: 0; -E2BIG if the one watch is larger than the span limit (it
 * can never succeed); -EDQUOT at max_watches_per_mm or past the span
 * limit (it can, once other watches are gone).
 */
int mrmon_mm_watch_add(struct mrmon_mm_count *c, const struct mrmon_limits *lim,
		       u64 span)
{
	if (span > lim->max_span)
		return -E2BIG;
	if (atomic_inc_return(&c->watches) > lim->max_watches_per_mm) {
		atomic_dec(&c->watches);
		return -EDQUOT;
	}
	if ((u64)atomic64_add_return(span, &c->span) > lim->max_span) {
		atomic64_sub(span, &c->span);
		atomic_dec(&c->watches);
		return -EDQUOT;
	}
	return 0;
}

/* n watches of the mm gone, covering span bytes together. */
void mrmon_mm_watch_sub(struct mrmon_mm_count *c, unsigned long n, u64 span)
{
	atomic_sub(n, &c->watches);
	atomic64_sub(span, &c->span);
}
