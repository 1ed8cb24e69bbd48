// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrmon_mm.c - how many watches one address space holds, across all its
 * descriptors.
 *
 * One invalidation calls the notifier of every watch of that mm the range
 * overlaps, each a constant amount of work (mrmon_notify.c).  The memory
 * charge (mrmon_charge.c) bounds a user's watches by RLIMIT_MEMLOCK, but
 * RDMA clusters commonly run with that limit unlimited, and CAP_IPC_LOCK
 * is exempt; so the number of watches of one mm is capped as well, by the
 * max_watches_per_mm parameter, which bounds the work of any one
 * invalidation of that mm whatever the limits.
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

/* One more watch of the mm: 0, or -EDQUOT at max_watches_per_mm. */
int mrmon_mm_watch_add(struct mrmon_mm_count *c)
{
	if (atomic_inc_return(&c->watches) > mrmon_limit(&mrmon_max_watches_per_mm)) {
		atomic_dec(&c->watches);
		return -EDQUOT;
	}
	return 0;
}

/* n watches of the mm gone. */
void mrmon_mm_watch_sub(struct mrmon_mm_count *c, unsigned long n)
{
	atomic_sub(n, &c->watches);
}
