/* SPDX-License-Identifier: MIT */
/*
 * lib/cache/event_ring.c against a model.  One thread: random pushes and drains
 * against a bounded FIFO (order, fullness, the overflow flag).  Then
 * producers in several threads, each also pushing from a signal handler
 * that interrupts its own pushes, against one draining thread: every
 * range pushed comes out exactly once unless its push reported the ring
 * full, and the overflow flag is seen iff a push did.  Negative control: a
 * slot published twice behind the ring's back is caught as a duplicate.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cache/event_ring.h"
#include "testutil.h"

#define PRODUCERS 3
#define PER_PRODUCER 10000
#define IDS ((PRODUCERS * 2 + 1) * PER_PRODUCER)

static struct mrc_event_ring ring;

static struct mrc_unmapped ev_of(uintptr_t id)
{
	return (struct mrc_unmapped){ id, id + 1, MRCACHE_CAUSE_UNMAP };
}

static void single_thread_model(void)
{
	struct mrc_unmapped out[MRC_EVENT_RING];
	uintptr_t fifo[MRC_EVENT_RING], next = 1;
	unsigned head = 0, count = 0;
	int model_overflow = 0, overflow;

	memset(&ring, 0, sizeof(ring));
	srand(7);
	for (int step = 0; step < 200000; step++) {
		if (rand() % 100 < 60) {
			struct mrc_unmapped e = ev_of(next);
			int rc = mrc_event_ring_push(&ring, &e);

			if (count == MRC_EVENT_RING) {
				CHECK_EQ(rc, -ENOSPC);
				model_overflow = 1;
			} else {
				CHECK_EQ(rc, 0);
				fifo[(head + count++) % MRC_EVENT_RING] = next;
			}
			next++;
			continue;
		}
		uint32_t n = mrc_event_ring_drain(&ring, out, &overflow);

		CHECK_EQ(n, count);
		CHECK_EQ(overflow, model_overflow);
		for (uint32_t i = 0; i < n && i < count; i++)
			CHECK_EQ(out[i].start, fifo[(head + i) % MRC_EVENT_RING]);
		head = (head + count) % MRC_EVENT_RING;
		count = 0;
		model_overflow = 0;
		if (test_failures)
			return;
	}
}

/* Concurrent part. */
static unsigned char *seen;		/* per id: times drained */
static unsigned char *dropped;		/* per id: its push said full */
static int producers_left, overflow_seen;
static uint64_t drained;		/* atomic: ranges the drainer took */
/* Each producer's handler pushes ids of its own range, until it ends. */
static __thread uintptr_t handler_next, handler_end;

static void push_id(uintptr_t id)
{
	struct mrc_unmapped e = ev_of(id);

	if (mrc_event_ring_push(&ring, &e) == -ENOSPC)
		dropped[id] = 1;
}

static void handler(int sig)
{
	if (handler_next < handler_end)
		push_id(handler_next++);
}

static void *producer(void *arg)
{
	uintptr_t base = 1 + (uintptr_t)arg * 2 * PER_PRODUCER;

	handler_next = base + PER_PRODUCER;
	handler_end = handler_next + PER_PRODUCER;
	for (uintptr_t id = base; id < base + PER_PRODUCER; id++) {
		push_id(id);
		if (id % 64)
			continue;
		pthread_kill(pthread_self(), SIGUSR1);
		/* Mostly below full, so that most pushes must come out. */
		while (id - base > __atomic_load_n(&drained, __ATOMIC_RELAXED) / PRODUCERS +
					  MRC_EVENT_RING / 4)
			sched_yield();
	}
	__atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void drain_all(void)
{
	struct mrc_unmapped out[MRC_EVENT_RING];
	int overflow;
	uint32_t n = mrc_event_ring_drain(&ring, out, &overflow);

	overflow_seen |= overflow;
	for (uint32_t i = 0; i < n; i++)
		seen[out[i].start]++;
	__atomic_fetch_add(&drained, n, __ATOMIC_RELAXED);
}

static void concurrent(void)
{
	pthread_t t[PRODUCERS];
	struct sigaction sa = { .sa_handler = handler };

	memset(&ring, 0, sizeof(ring));
	seen = calloc(IDS, 1);
	dropped = calloc(IDS, 1);
	sigaction(SIGUSR1, &sa, NULL);
	producers_left = PRODUCERS;
	for (long i = 0; i < PRODUCERS; i++)
		pthread_create(&t[i], NULL, producer, (void *)i);
	while (__atomic_load_n(&producers_left, __ATOMIC_ACQUIRE))
		drain_all();
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(t[i], NULL);
	drain_all();
	drain_all();
}

/* Ids pushed by handlers that never ran are neither seen nor dropped:
 * only ids some push claimed are checked. */
static unsigned check_concurrent(void)
{
	unsigned bad = 0, drops = 0, got = 0;

	for (uintptr_t id = 1; id < IDS; id++) {
		drops += dropped[id];
		got += seen[id];
		if (seen[id] > 1 || (seen[id] && dropped[id]))
			bad++;
	}
	for (uintptr_t p = 0; p < PRODUCERS; p++)
		for (uintptr_t id = 1 + p * 2 * PER_PRODUCER; id < 1 + (2 * p + 1) * PER_PRODUCER; id++)
			bad += !seen[id] && !dropped[id];
	if (!!drops != !!overflow_seen)
		bad++;
	printf("concurrent: %u drained, %u dropped (ring full), overflow %s, %u wrong\n",
	       got, drops, overflow_seen ? "seen" : "not seen", bad);
	return bad;
}

int main(void)
{
	single_thread_model();
	concurrent();
	CHECK_EQ(check_concurrent(), 0);

	/* Negative control: a range published twice, behind the ring's back. */
	ring.slot[ring.head % MRC_EVENT_RING].ev = ev_of(1);
	__atomic_store_n(&ring.slot[ring.head % MRC_EVENT_RING].turn,
			 2 * (ring.head / MRC_EVENT_RING) + 1, __ATOMIC_RELEASE);
	drain_all();
	CHECK(check_concurrent() > 0);
	return test_result();
}
