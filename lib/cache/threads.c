/* SPDX-License-Identifier: MIT */
/* threads.c - per-thread blocks: claimed at first use, released at thread
 * exit (threads.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "cache/cache.h"

__thread struct mrc_thread_ref mrc_thread_refs[MRC_THREAD_CACHES];

/* th->claimed[b] */
enum { BLOCK_FREE, BLOCK_OWNED, BLOCK_ORPHAN };

static pthread_key_t exit_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int key_ok;

static void threads_unref(struct mrc_threads *th)
{
	if (__atomic_sub_fetch(&th->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(th);
}

/* A thread that exits holding regions in its slots (a put to come from
 * another thread, which clears the slot: mrc_threads_clear_any) leaves
 * its block orphaned: the slots stay the holds they are, and the block is
 * claimed again only once they are all clear (block_claim).  Nothing
 * moves a hold from a slot to the count, so no put can miss it.  Slots of
 * a destroyed cache are empty: mrcache_destroy() refuses while one holds
 * a region. */
static void block_release(struct mrc_threads *th, struct mrc_thread *t)
{
	uint8_t state = BLOCK_FREE;

	if (t == &th->shared)
		return;
	for (int i = 0; i < MRC_THREAD_SLOTS; i++)
		if (__atomic_load_n(&t->slot[i], __ATOMIC_SEQ_CST))
			state = BLOCK_ORPHAN;
	__atomic_store_n(&th->claimed[t - th->block], state, __ATOMIC_RELEASE);
}

/* An orphaned block has no owner to publish into its slots: once they are
 * all clear they stay clear, and the block can be claimed. */
static int block_empty(const struct mrc_thread *t)
{
	for (int i = 0; i < MRC_THREAD_SLOTS; i++)
		if (__atomic_load_n(&t->slot[i], __ATOMIC_SEQ_CST))
			return 0;
	return 1;
}

static void ref_drop(struct mrc_thread_ref *ref)
{
	block_release(ref->threads, ref->t);
	threads_unref(ref->threads);
	ref->threads = NULL;
	ref->t = NULL;
}

static void thread_exit(void *arg)
{
	for (int i = 0; i < MRC_THREAD_CACHES; i++)
		if (mrc_thread_refs[i].threads)
			ref_drop(&mrc_thread_refs[i]);
}

static void key_create(void)
{
	key_ok = pthread_key_create(&exit_key, thread_exit) == 0;
}

/* A library unloaded by dlclose() must not leave its destructor behind:
 * threads that exit afterwards keep their blocks (their caches are gone). */
static void __attribute__((destructor)) key_delete(void)
{
	if (key_ok)
		pthread_key_delete(exit_key);
}

static struct mrc_thread *block_claim(struct mrc_threads *th)
{
	for (uint32_t b = 0; b < MRC_THREADS; b++) {
		uint8_t state = __atomic_load_n(&th->claimed[b], __ATOMIC_ACQUIRE);

		if (state == BLOCK_OWNED || (state == BLOCK_ORPHAN && !block_empty(&th->block[b])) ||
		    !__atomic_compare_exchange_n(&th->claimed[b], &state, BLOCK_OWNED, 0,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		uint32_t max = __atomic_load_n(&th->claimed_max, __ATOMIC_RELAXED);

		while (max < b + 1 &&
		       !__atomic_compare_exchange_n(&th->claimed_max, &max, b + 1, 0,
						    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			;
		return &th->block[b];
	}
	return &th->shared;
}

struct mrc_thread *mrc_thread_get_slow(struct mrc_threads *th)
{
	struct mrc_thread_ref *ref = NULL;

	pthread_once(&key_once, key_create);
	/* Refs of destroyed caches make room first. */
	for (int i = 0; i < MRC_THREAD_CACHES; i++) {
		struct mrc_thread_ref *r = &mrc_thread_refs[i];

		if (r->threads && __atomic_load_n(&r->threads->dead, __ATOMIC_ACQUIRE))
			ref_drop(r);
		if (!r->threads && !ref)
			ref = r;
	}
	/* Without a ref (or a destructor) a block could not be given back. */
	if (!ref || !key_ok)
		return &th->shared;
	__atomic_fetch_add(&th->refs, 1, __ATOMIC_RELAXED);
	pthread_setspecific(exit_key, mrc_thread_refs);
	ref->t = block_claim(th);
	ref->threads = th;
	return ref->t;
}

int mrc_threads_create(struct mrcache *c, struct mrc_threads **out)
{
	struct mrc_threads *th = aligned_alloc(64, sizeof(*th));

	if (!th)
		return -ENOMEM;
	memset(th, 0, sizeof(*th));
	th->cache = c;
	th->refs = 1;
	*out = th;
	return 0;
}

void mrc_threads_destroy(struct mrc_threads *th)
{
	if (!th)
		return;
	__atomic_store_n(&th->dead, 1, __ATOMIC_RELEASE);
	/* The destroying thread's own ref goes now: a program that creates
	 * and destroys caches on one thread frees all it allocated. */
	for (int i = 0; i < MRC_THREAD_CACHES; i++)
		if (mrc_thread_refs[i].threads == th)
			ref_drop(&mrc_thread_refs[i]);
	threads_unref(th);
}

void mrc_threads_sum(struct mrc_threads *th, uint64_t *hits, uint64_t *subrange_hits)
{
	uint32_t n = __atomic_load_n(&th->claimed_max, __ATOMIC_ACQUIRE);

	for (uint32_t i = 0; i <= n; i++) {
		struct mrc_thread *t = i < n ? &th->block[i] : &th->shared;

		*hits += __atomic_load_n(&t->hits, __ATOMIC_RELAXED);
		*subrange_hits += __atomic_load_n(&t->subrange_hits, __ATOMIC_RELAXED);
	}
}

int mrc_threads_held(struct mrc_threads *th, const struct mrcache_region *r)
{
	uint32_t n = __atomic_load_n(&th->claimed_max, __ATOMIC_SEQ_CST);

	for (uint32_t b = 0; b < n; b++)
		for (int i = 0; i < MRC_THREAD_SLOTS; i++)
			if (__atomic_load_n(&th->block[b].slot[i], __ATOMIC_SEQ_CST) == r)
				return 1;
	return 0;
}

int mrc_threads_any_held(struct mrc_threads *th)
{
	uint32_t n = __atomic_load_n(&th->claimed_max, __ATOMIC_SEQ_CST);

	for (uint32_t b = 0; b < n; b++)
		for (int i = 0; i < MRC_THREAD_SLOTS; i++)
			if (__atomic_load_n(&th->block[b].slot[i], __ATOMIC_SEQ_CST))
				return 1;
	return 0;
}

int mrc_threads_clear_any(struct mrc_threads *th, struct mrcache_region *r)
{
	uint32_t n = __atomic_load_n(&th->claimed_max, __ATOMIC_SEQ_CST);

	for (uint32_t b = 0; b < n; b++)
		for (int i = 0; i < MRC_THREAD_SLOTS; i++) {
			struct mrcache_region *want = r;

			if (__atomic_load_n(&th->block[b].slot[i], __ATOMIC_RELAXED) == r &&
			    __atomic_compare_exchange_n(&th->block[b].slot[i], &want, NULL, 0,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
				return 1;
		}
	return 0;
}
