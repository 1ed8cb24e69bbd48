/* SPDX-License-Identifier: MIT */
/*
 * pins.c - the registration callbacks every peer shares, so that the caches
 * differ only in what they are: a counting no-op (the cache's own cost) or
 * io_uring fixed buffers in a sparse table (real pins).
 *
 * The counters are per-thread stripes (bench.h) because the no-cache peer
 * registers from several threads at once (no-op pins only): no shared
 * write on its get or put.  The caches call us under their own locks.
 * The uring slot stack is single-threaded: churn runs one thread.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <sys/uio.h>
#include "bench.h"

static __thread int stripe_plus_one;

static struct pin_stripe *my_stripe(struct bench_pins *b)
{
	static unsigned next;

	if (!stripe_plus_one)
		stripe_plus_one = (int)(__atomic_fetch_add(&next, 1, __ATOMIC_RELAXED) %
					PIN_STRIPES) + 1;
	return &b->stripe[stripe_plus_one - 1];
}

/* Only this thread writes its stripe: relaxed loads and stores, no
 * read-modify-write. */
static void bump(uint64_t *v, int64_t by)
{
	__atomic_store_n(v, __atomic_load_n(v, __ATOMIC_RELAXED) + (uint64_t)by,
			 __ATOMIC_RELAXED);
}

static void count_reg(struct bench_pins *b, size_t len)
{
	struct pin_stripe *s = my_stripe(b);

	bump(&s->regs, 1);
	bump(&s->bytes_total, (int64_t)len);
	bump(&s->bytes_now, (int64_t)len);
	if (s->bytes_now > s->bytes_peak)
		__atomic_store_n(&s->bytes_peak, s->bytes_now, __ATOMIC_RELAXED);
}

static void count_dereg(struct bench_pins *b, size_t len)
{
	struct pin_stripe *s = my_stripe(b);

	bump(&s->deregs, 1);
	bump(&s->bytes_now, -(int64_t)len);
}

void pins_sync(struct bench_pins *b)
{
	b->regs = b->deregs = b->bytes_now = b->bytes_peak = b->bytes_total = 0;
	for (int i = 0; i < PIN_STRIPES; i++) {
		const struct pin_stripe *s = &b->stripe[i];

		b->regs += __atomic_load_n(&s->regs, __ATOMIC_RELAXED);
		b->deregs += __atomic_load_n(&s->deregs, __ATOMIC_RELAXED);
		b->bytes_now += __atomic_load_n(&s->bytes_now, __ATOMIC_RELAXED);
		b->bytes_peak += __atomic_load_n(&s->bytes_peak, __ATOMIC_RELAXED);
		b->bytes_total += __atomic_load_n(&s->bytes_total, __ATOMIC_RELAXED);
	}
}

void pins_reset(struct bench_pins *b)
{
	for (int i = 0; i < PIN_STRIPES; i++) {
		struct pin_stripe *s = &b->stripe[i];

		s->regs = s->deregs = s->bytes_total = 0;
		s->bytes_peak = s->bytes_now;
	}
	pins_sync(b);
}

int pins_open(struct bench_pins *b, enum bench_pin kind, unsigned slots)
{
	int ret;

	*b = (struct bench_pins){ .kind = kind };
	if (kind == PIN_NOOP)
		return 0;
	b->ring = calloc(1, sizeof(*b->ring));
	b->free_slots = calloc(slots, sizeof(*b->free_slots));
	b->slot_len = calloc(slots, sizeof(*b->slot_len));
	if (!b->ring || !b->free_slots || !b->slot_len) {
		pins_close(b);
		return -ENOMEM;
	}
	ret = io_uring_queue_init(64, b->ring, 0);
	if (ret < 0) {
		free(b->ring);
		b->ring = NULL;
		pins_close(b);
		return ret;
	}
	b->slots = slots;
	for (unsigned i = 0; i < slots; i++)
		b->free_slots[i] = slots - 1 - i;
	b->nfree = slots;
	return 0;
}

/* The sparse table is registered only for peers that use these callbacks:
 * mrcache's own uring backend wants a ring with no buffers. */
static int pins_table(struct bench_pins *b)
{
	int ret;

	if (b->table)
		return 0;
	ret = io_uring_register_buffers_sparse(b->ring, b->slots);
	if (ret < 0)
		return ret;
	b->table = 1;
	return 0;
}

void pins_close(struct bench_pins *b)
{
	if (b->ring) {
		io_uring_queue_exit(b->ring);
		free(b->ring);
	}
	free(b->free_slots);
	free(b->slot_len);
	b->ring = NULL;
	b->free_slots = NULL;
	b->slot_len = NULL;
}

int pins_reg(struct bench_pins *b, void *addr, size_t len, void **handle,
	     uint64_t *key)
{
	struct iovec iov = { .iov_base = addr, .iov_len = len };
	__u64 tag = 0;
	unsigned slot;
	int ret;

	if (b->kind == PIN_NOOP) {
		/* The handle carries the length: no memory of our own, so
		 * the memory-per-region figure is the cache's alone. */
		*handle = (void *)(uintptr_t)len;
		*key = 0;
		count_reg(b, len);
		return 0;
	}
	if ((ret = pins_table(b)) < 0)
		return ret;
	if (!b->nfree)
		return -ENOSPC;
	slot = b->free_slots[--b->nfree];
	ret = io_uring_register_buffers_update_tag(b->ring, slot, &iov, &tag, 1);
	if (ret < 0) {
		b->free_slots[b->nfree++] = slot;
		return ret;
	}
	b->slot_len[slot] = len;
	*handle = (void *)(uintptr_t)(slot + 1);
	*key = slot;
	count_reg(b, len);
	return 0;
}

int pins_dereg(struct bench_pins *b, void *handle)
{
	struct iovec iov = { 0 };
	__u64 tag = 0;
	unsigned slot;
	int ret;

	if (b->kind == PIN_NOOP) {
		count_dereg(b, (size_t)(uintptr_t)handle);
		return 0;
	}
	slot = (unsigned)((uintptr_t)handle - 1);
	ret = io_uring_register_buffers_update_tag(b->ring, slot, &iov, &tag, 1);
	if (ret < 0)
		return ret;
	count_dereg(b, b->slot_len[slot]);
	b->free_slots[b->nfree++] = slot;
	return 0;
}
