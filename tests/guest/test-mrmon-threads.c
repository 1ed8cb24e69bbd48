/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-threads: 16 threads share one descriptor and watch, unwatch
 * and unmap concurrently (plus one thread draining events with blocking
 * reads).  Each thread checks, for its own ranges, that a word is valid
 * right after WATCH and invalid as soon as its munmap returned, and that
 * UNWATCH of its watches succeeds exactly once.  Control: a watch the
 * thread does not unmap stays valid through all the others' activity.
 * The control page sits alone in a 2 MiB window of its own: a VMA split
 * anywhere in a window clears every watch in it (docs/mrmon.md "Splits"),
 * so a control beside the other threads' mappings could be cleared by
 * design, which is not what this test is looking for.
 */
#include <pthread.h>
#include <stdio.h>
#include "mrmon_test.h"

#define THREADS 16
#define ROUNDS 100
#define RANGES 8

#define WINDOW (2ul << 20)

static struct mon m;
static int stop;

/* One read-write page at the start of an aligned 2 MiB window that is
 * otherwise reserved PROT_NONE, so no other mapping lands in the window.
 * *reserve and *reserve_len: what to unmap at the end. */
static char *map_control(char **reserve, size_t *reserve_len)
{
	size_t len = 2 * WINDOW;
	char *raw = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *win;

	if (raw == MAP_FAILED)
		return NULL;
	win = (char *)(((uintptr_t)raw + WINDOW - 1) & ~(WINDOW - 1));
	if (mprotect(win, PAGE, PROT_READ | PROT_WRITE)) {
		munmap(raw, len);
		return NULL;
	}
	win[0] = 1;
	*reserve = raw;
	*reserve_len = len;
	return win;
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	char *reserve = NULL;
	size_t reserve_len = 0;
	char *keep = map_control(&reserve, &reserve_len);
	uint32_t ks = 0, slot[RANGES];
	uint64_t ke = 0, e[RANGES];

	CHECK(keep != NULL);
	if (!keep)
		return NULL;
	CHECK_EQ(mon_watch(&m, keep, PAGE, 0, &ks, &ke), 0);
	for (int round = 0; round < ROUNDS; round++) {
		char *p = mmap(NULL, RANGES * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		unsigned cut;

		CHECK(p != MAP_FAILED);
		if (p == MAP_FAILED)
			break;
		for (int i = 0; i < RANGES; i++) {
			p[i * PAGE] = 1;
			CHECK_EQ(mon_watch(&m, p + i * PAGE, PAGE, i, &slot[i], &e[i]), 0);
			CHECK(mon_valid(&m, slot[i], e[i]));
		}
		seed = seed * 1103515245u + 12345u;
		cut = (seed >> 16) % RANGES;
		munmap(p, cut * PAGE);
		for (unsigned i = 0; i < RANGES; i++) {
			if (i < cut)
				CHECK(!mon_valid(&m, slot[i], e[i]));
			/* Unmapped: freed by the invalidation (ABI 3). */
			CHECK_EQ(mon_unwatch(&m, slot[i], e[i]), i < cut ? -ESTALE : 0);
			CHECK_EQ(mon_unwatch(&m, slot[i], e[i]), -ESTALE);
		}
		munmap(p + cut * PAGE, (RANGES - cut) * PAGE);
	}
	CHECK(mon_valid(&m, ks, ke));
	CHECK_EQ(mon_unwatch(&m, ks, ke), 0);
	munmap(reserve, reserve_len);
	return NULL;
}

static void *drainer(void *arg)
{
	struct mrmon_event ev[32];
	long *count = arg;
	ssize_t n;

	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		n = read(m.fd, ev, sizeof(ev));
		if (n > 0)
			*count += n / (ssize_t)sizeof(ev[0]);
		else
			usleep(1000);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS], d;
	long events = 0;

	/* A slot whose watch an invalidation freed comes back when its event
	 * is read (ABI 3): room for the queue as well. */
	CHECK_EQ(mon_open(&m, THREADS * (RANGES + 1) + 1024, 1024), 0);
	CHECK_EQ(pthread_create(&d, NULL, drainer, &events), 0);
	for (long i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(d, NULL);
	printf("%d threads x %d rounds: %lu invalidations, %lu overflows, %ld events read\n",
	       THREADS, ROUNDS, (unsigned long)m.hdr->invalidations,
	       (unsigned long)m.hdr->overflows, events);
	CHECK(m.hdr->invalidations > 0);
	mon_close(&m);
	return test_result();
}
