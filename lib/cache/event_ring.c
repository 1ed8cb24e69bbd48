/* SPDX-License-Identifier: MIT */
/* event_ring.c - see event_ring.h. */
#include <errno.h>
#include "cache/event_ring.h"

static struct mrc_event_slot *slot_of(struct mrc_event_ring *q, uint64_t pos)
{
	return &q->slot[pos % MRC_EVENT_RING];
}

static uint64_t free_turn(uint64_t pos)
{
	return 2 * (pos / MRC_EVENT_RING);
}

int mrc_event_ring_push(struct mrc_event_ring *q, const struct mrc_unmapped *ev)
{
	uint64_t pos = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
	struct mrc_event_slot *s;

	for (;;) {
		uint64_t turn;

		s = slot_of(q, pos);
		turn = __atomic_load_n(&s->turn, __ATOMIC_ACQUIRE);
		if (turn < free_turn(pos)) {
			/* An older lap's range is still there: full. */
			__atomic_store_n(&q->overflow, 1, __ATOMIC_SEQ_CST);
			return -ENOSPC;
		}
		if (turn > free_turn(pos)) {
			/* Another push took pos and published it already. */
			pos = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);
			continue;
		}
		if (__atomic_compare_exchange_n(&q->tail, &pos, pos + 1, 1,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	s->ev = *ev;
	__atomic_store_n(&s->turn, free_turn(pos) + 1, __ATOMIC_RELEASE);
	return 0;
}

uint32_t mrc_event_ring_drain(struct mrc_event_ring *q, struct mrc_unmapped *out,
			      int *overflow)
{
	uint32_t n = 0;

	while (n < MRC_EVENT_RING) {
		struct mrc_event_slot *s = slot_of(q, q->head);

		if (__atomic_load_n(&s->turn, __ATOMIC_ACQUIRE) != free_turn(q->head) + 1)
			break;
		out[n++] = s->ev;
		__atomic_store_n(&s->turn, free_turn(q->head + MRC_EVENT_RING), __ATOMIC_RELEASE);
		q->head++;
	}
	*overflow = __atomic_exchange_n(&q->overflow, 0, __ATOMIC_SEQ_CST);
	return n;
}
