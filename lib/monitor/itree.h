/* SPDX-License-Identifier: MIT */
/*
 * itree.h - a set of intervals [start, end) with overlap queries in
 * O(log n + k): a treap (random priorities) ordered by start, each node
 * carrying the largest end of its subtree.  Intrusive: the caller embeds
 * struct mrc_itree_node and owns the memory; nothing here allocates, and
 * nothing is thread-safe (the caller's lock guards the set).
 */
#ifndef MRC_ITREE_H
#define MRC_ITREE_H

#include <stdint.h>

struct mrc_itree_node {
	struct mrc_itree_node *left, *right;
	uintptr_t start, end;		/* set before insertion, then fixed */
	uintptr_t max_end;		/* of the subtree */
	uint32_t prio;
};

struct mrc_itree {
	struct mrc_itree_node *root;
	uint32_t seed;
};

/* n->start < n->end.  Several nodes may have the same interval. */
void mrc_itree_insert(struct mrc_itree *t, struct mrc_itree_node *n);
/* n must be in t. */
void mrc_itree_remove(struct mrc_itree *t, struct mrc_itree_node *n);

/* Calls fn on every node overlapping [start, end), in start order; stops
 * early and returns fn's value when it is nonzero.  fn must not change
 * the set. */
typedef int (*mrc_itree_fn)(struct mrc_itree_node *n, void *arg);
int mrc_itree_overlaps(const struct mrc_itree *t, uintptr_t start, uintptr_t end,
		       mrc_itree_fn fn, void *arg);
#endif
