/* SPDX-License-Identifier: MIT */
/*
 * The interval tree (lib/monitor/itree.c, the uffd monitor's watch set) against a
 * brute-force model: random inserts and removes of intervals, some equal,
 * some nested, and overlap queries whose answers (which nodes, in start
 * order, and an early stop) must match the model's.  A negative control
 * shows the comparison notices one node missing from an answer.
 */
#include <stdint.h>
#include <stdlib.h>
#include "monitor/itree.h"
#include "testutil.h"

#define NODES	600
#define SPACE	5000

static struct mrc_itree_node node[NODES];
static int in_tree[NODES];

struct answer {
	struct mrc_itree_node *seen[NODES];
	int n, stop_after;
};

static int note(struct mrc_itree_node *n, void *arg)
{
	struct answer *a = arg;

	a->seen[a->n++] = n;
	return a->n == a->stop_after;
}

/* The model's answer: overlapping nodes sorted by (start, address). */
static void expected(uintptr_t s, uintptr_t e, struct answer *a)
{
	a->n = 0;
	for (int i = 0; i < NODES; i++)
		if (in_tree[i] && node[i].start < e && node[i].end > s)
			a->seen[a->n++] = &node[i];
	for (int i = 1; i < a->n; i++)
		for (int j = i; j > 0 && (a->seen[j]->start < a->seen[j - 1]->start ||
					  (a->seen[j]->start == a->seen[j - 1]->start &&
					   a->seen[j] < a->seen[j - 1])); j--) {
			struct mrc_itree_node *t = a->seen[j];

			a->seen[j] = a->seen[j - 1];
			a->seen[j - 1] = t;
		}
}

static int differs(const struct answer *got, const struct answer *want, int limit)
{
	int n = want->n < limit ? want->n : limit;

	if (got->n != n)
		return 1;
	for (int i = 0; i < n; i++)
		if (got->seen[i] != want->seen[i])
			return 1;
	return 0;
}

int main(void)
{
	static struct answer got, want;
	struct mrc_itree t = { 0 };
	unsigned seed = 4242;
	int mismatches = 0;

	for (int op = 0; op < 60000; op++) {
		int i = rand_r(&seed) % NODES;
		uintptr_t s = 1 + (uintptr_t)(rand_r(&seed) % SPACE);
		uintptr_t len = 1 + (uintptr_t)(rand_r(&seed) % (rand_r(&seed) % 8 ? 20 : 900));

		switch (rand_r(&seed) % 3) {
		case 0:
			if (in_tree[i])
				break;
			/* Every tenth an exact copy of another: equal keys. */
			node[i].start = s;
			node[i].end = s + len;
			if (op % 10 == 0 && in_tree[(i + 1) % NODES]) {
				node[i].start = node[(i + 1) % NODES].start;
				node[i].end = node[(i + 1) % NODES].end;
			}
			mrc_itree_insert(&t, &node[i]);
			in_tree[i] = 1;
			break;
		case 1:
			if (!in_tree[i])
				break;
			mrc_itree_remove(&t, &node[i]);
			in_tree[i] = 0;
			break;
		default:
			got.n = 0;
			got.stop_after = rand_r(&seed) % 4 ? 0 : 1 + rand_r(&seed) % 3;
			mrc_itree_overlaps(&t, s, s + len, note, &got);
			expected(s, s + len, &want);
			mismatches += differs(&got, &want, got.stop_after ? got.stop_after : NODES);
		}
	}
	CHECK_EQ(mismatches, 0);

	/* Empty and inverted ranges find nothing. */
	got.n = 0;
	got.stop_after = 0;
	CHECK_EQ(mrc_itree_overlaps(&t, 100, 100, note, &got), 0);
	CHECK_EQ(mrc_itree_overlaps(&t, 200, 100, note, &got), 0);
	CHECK_EQ(got.n, 0);

	/* Negative control: an answer missing one node is noticed. */
	got.n = 0;
	mrc_itree_overlaps(&t, 0, SPACE + 1000, note, &got);
	expected(0, SPACE + 1000, &want);
	CHECK(want.n > 1);
	CHECK_EQ(differs(&got, &want, NODES), 0);
	got.n--;
	CHECK_EQ(differs(&got, &want, NODES), 1);
	return test_result();
}
