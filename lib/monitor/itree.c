/* SPDX-License-Identifier: MIT */
/* itree.c - the treap behind mrc_itree_* (see itree.h). */
#include <stddef.h>
#include "monitor/itree.h"

static uintptr_t max_end(const struct mrc_itree_node *n)
{
	return n ? n->max_end : 0;
}

static void update(struct mrc_itree_node *n)
{
	uintptr_t m = n->end;

	if (max_end(n->left) > m)
		m = max_end(n->left);
	if (max_end(n->right) > m)
		m = max_end(n->right);
	n->max_end = m;
}

/* Order by start, then by address: every node has a distinct key. */
static int before(const struct mrc_itree_node *a, const struct mrc_itree_node *b)
{
	return a->start < b->start || (a->start == b->start && (uintptr_t)a < (uintptr_t)b);
}

/* Split t into the nodes before `key` (*lo) and the others (*hi); with
 * `inclusive`, key itself goes to *lo. */
static void split(struct mrc_itree_node *t, const struct mrc_itree_node *key, int inclusive,
		  struct mrc_itree_node **lo, struct mrc_itree_node **hi)
{
	if (!t) {
		*lo = *hi = NULL;
	} else if (before(t, key) || (inclusive && t == key)) {
		split(t->right, key, inclusive, &t->right, hi);
		*lo = t;
		update(t);
	} else {
		split(t->left, key, inclusive, lo, &t->left);
		*hi = t;
		update(t);
	}
}

/* Every node of a is before every node of b. */
static struct mrc_itree_node *merge(struct mrc_itree_node *a, struct mrc_itree_node *b)
{
	if (!a || !b)
		return a ? a : b;
	if (a->prio > b->prio) {
		a->right = merge(a->right, b);
		update(a);
		return a;
	}
	b->left = merge(a, b->left);
	update(b);
	return b;
}

void mrc_itree_insert(struct mrc_itree *t, struct mrc_itree_node *n)
{
	struct mrc_itree_node *lo, *hi;

	/* xorshift32: priorities need only be independent of the keys. */
	t->seed = t->seed ? t->seed : 2463534242u;
	t->seed ^= t->seed << 13;
	t->seed ^= t->seed >> 17;
	t->seed ^= t->seed << 5;
	n->prio = t->seed;
	n->left = n->right = NULL;
	n->max_end = n->end;
	split(t->root, n, 0, &lo, &hi);
	t->root = merge(merge(lo, n), hi);
}

void mrc_itree_remove(struct mrc_itree *t, struct mrc_itree_node *n)
{
	struct mrc_itree_node *lo, *mid, *hi;

	split(t->root, n, 0, &lo, &hi);
	split(hi, n, 1, &mid, &hi);
	t->root = merge(lo, hi);
}

static int overlaps(struct mrc_itree_node *n, uintptr_t start, uintptr_t end,
		    mrc_itree_fn fn, void *arg)
{
	int rc;

	if (!n || n->max_end <= start)
		return 0;
	rc = overlaps(n->left, start, end, fn, arg);
	if (rc || n->start >= end)
		return rc;
	if (n->end > start) {
		rc = fn(n, arg);
		if (rc)
			return rc;
	}
	return overlaps(n->right, start, end, fn, arg);
}

int mrc_itree_overlaps(const struct mrc_itree *t, uintptr_t start, uintptr_t end,
		       mrc_itree_fn fn, void *arg)
{
	return start < end ? overlaps(t->root, start, end, fn, arg) : 0;
}
