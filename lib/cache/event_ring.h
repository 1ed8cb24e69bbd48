/* SPDX-License-Identifier: MIT */
/*
 * event_ring.h - the ranges the user-side monitors report, waiting for the
 * next cache call to reclaim what they invalidated.
 *
 * Any thread pushes, and so may a signal handler that interrupted a push or
 * a drain on its own thread (a handler that munmaps or frees cached
 * memory): a push takes no lock and never waits for anyone, so it cannot
 * wait for the very code it interrupted.  One thread at a time drains (the
 * cache lock's holder).  A bounded ring of per-slot turn counters (after
 * D. Vyukov's bounded queue), zero-initialised:
 *
 *   position p lives in slot p % N, lap p / N; the slot's turn is
 *   2 * lap      free for position p
 *   2 * lap + 1  holds position p's range
 *
 *   push (any thread)                      drain (the lock holder)
 *   -----------------                      -----------------------
 *   p = tail; slot free for p's lap?       while slot(head) holds head:
 *     no, an older lap's range: full         copy it out
 *       -> set overflow, return              turn = 2 * (lap + 1)  (free)
 *   CAS tail p -> p + 1 (else retry)         head++
 *   write the range; turn = 2 * lap + 1    overflow: exchange with 0
 *
 * A slot claimed but not yet published (its producer preempted, or
 * interrupted by the signal handler whose push came after) ends a drain
 * early; its producer publishes it and the cache's events_waiting flag,
 * raised after every push, brings the next drain.  Dropping a range is
 * safe: the words of its regions were cleared before the push, and an
 * overflow makes the cache check every region's word (mrc_cache_rescan).
 */
#ifndef MRC_EVENT_RING_H
#define MRC_EVENT_RING_H

#include <stdint.h>
#include "mrcache.h"

#define MRC_EVENT_RING 256	/* a power of two */

struct mrc_unmapped {
	uintptr_t start, end;
	enum mrcache_cause cause;
};

struct mrc_event_slot {
	uint64_t turn;		/* atomic */
	struct mrc_unmapped ev;
};

struct mrc_event_ring {
	struct mrc_event_slot slot[MRC_EVENT_RING];
	uint64_t tail;		/* atomic: the next position to claim */
	uint64_t head;		/* the next position to drain: the drainer's */
	int overflow;		/* atomic: a range was dropped since the last drain */
};

/* Async-signal-safe, lock-free.  0, or -ENOSPC when the ring was full (the
 * overflow flag is then set). */
int mrc_event_ring_push(struct mrc_event_ring *q, const struct mrc_unmapped *ev);
/* One drainer at a time.  Moves up to MRC_EVENT_RING published ranges, in
 * order, to out[] and returns how many; *overflow tells (and clears)
 * whether any was dropped. */
uint32_t mrc_event_ring_drain(struct mrc_event_ring *q, struct mrc_unmapped *out,
			      int *overflow);

#endif
