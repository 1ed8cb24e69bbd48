/* SPDX-License-Identifier: MIT */
/*
 * mremap shrink while other threads hold mmap_lock.  Each thread has its
 * own ring, oracle and cache and does what realloc() does with an mmapped
 * block: map 4 MiB, get and check it, shrink it to 1 MiB in place
 * (mremap), grow it back to 4 MiB (in place when nothing took the space
 * behind it) and get and check it again with an io_uring READ_FIXED into
 * the tail.  A monitor that missed the shrink hands out the old 4 MiB
 * registration: the bytes land in the tail's old pages.
 *
 * The threads' mmap/mremap calls make the bpf programs' VMA lookup
 * (bpf_find_vma, a trylock of mmap_lock) fail often; the shrink decoder
 * must then still invalidate the cut tail (issue 25, item 1).  `none`
 * runs first as the negative control and must read stale bytes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "bpf-test.h"
#include "oracle.h"
#include "testutil.h"

#define BIG (4ul << 20)
#define SMALL (1ul << 20)
#define PROBE (64ul << 10)	/* checked: in the tail, past SMALL */
#define THREADS 4
#define ROUNDS 300

struct worker {
	pthread_t tid;
	enum mrcache_monitor_kind monitor;
	unsigned checks, stale, moved, errors, busy;
	int skip;
};

static int check(struct oracle *o, struct mrcache *c, char *p, struct worker *w)
{
	struct mrcache_region *r;
	int rc = mrcache_get(c, p, BIG, MRCACHE_ACCESS_LOCAL_WRITE, &r);

	if (rc == -EAGAIN) {
		w->busy++;	/* issue 25 item 10: never for lock contention */
		return 0;
	}
	if (rc) {
		fprintf(stderr, "get: %s\n", strerror(-rc));
		w->errors++;
		return -1;
	}
	rc = oracle_check(o, 0, r, p + BIG - PROBE, PROBE);
	mrcache_put(c, r);
	w->checks++;
	if (rc == ORACLE_STALE)
		w->stale++;
	else if (rc < 0)
		w->errors++;
	return 0;
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct oracle o;
	char *p = NULL;

	if (oracle_init(&o, 1, PROBE)) {
		w->skip = 1;
		return NULL;
	}
	oracle_config(&o, &cfg, w->monitor, 64);
	if (mrcache_create(&cfg, &c)) {
		w->skip = 1;
		oracle_fini(&o);
		return NULL;
	}
	for (unsigned i = 0; i < ROUNDS && !w->errors; i++) {
		char *q;

		if (!p) {
			p = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED) {
				w->errors++;
				p = NULL;
				break;
			}
			madvise(p, BIG, MADV_NOHUGEPAGE);
		}
		if (check(&o, c, p, w))
			break;
		if (mremap(p, BIG, SMALL, 0) != p) {
			w->errors++;
			break;
		}
		q = mremap(p, SMALL, BIG, MREMAP_MAYMOVE);
		if (q == MAP_FAILED) {
			w->errors++;
			break;
		}
		if (q != p) {
			w->moved++;	/* another thread took the space: a miss */
			p = q;
			continue;
		}
		if (check(&o, c, p, w))
			break;
	}
	if (p)
		munmap(p, BIG);
	mrcache_destroy(c);
	oracle_fini(&o);
	return NULL;
}

/* Run `threads` workers under monitor m; -1 when it cannot start here. */
static int run(enum mrcache_monitor_kind m, unsigned threads, unsigned *checks)
{
	struct worker w[THREADS];
	unsigned stale = 0, moved = 0, errors = 0, busy = 0, skip = 0;

	*checks = 0;
	memset(w, 0, sizeof(w));
	for (unsigned i = 0; i < threads; i++) {
		w[i].monitor = m;
		if (pthread_create(&w[i].tid, NULL, worker_run, &w[i]))
			return -1;
	}
	for (unsigned i = 0; i < threads; i++) {
		pthread_join(w[i].tid, NULL);
		*checks += w[i].checks;
		stale += w[i].stale;
		moved += w[i].moved;
		errors += w[i].errors;
		busy += w[i].busy;
		skip += w[i].skip;
	}
	printf("  %-5s %u thread(s): %u stale of %u checks (%u moved, %u EAGAIN, %u errors)\n",
	       mrcache_monitor_name(m), threads, stale, *checks, moved, busy, errors);
	CHECK_EQ(errors, 0);
	CHECK_EQ(busy, 0);
	return skip ? -1 : (int)stale;
}

int main(void)
{
	enum mrcache_monitor_kind m;
	unsigned checks;
	int stale;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bpf_test_pick_monitor();
	if (mrcache_monitor_parse(getenv("MRCACHE_MONITOR"), &m))
		return 1;
	stale = run(MRCACHE_MONITOR_NONE, 1, &checks);
	if (stale < 0)
		SKIP("io_uring is unusable here");
	if (stale == 0)
		SKIP("the control saw no stale byte (nothing grew in place?)");
	for (unsigned t = 1; t <= THREADS; t *= 2) {
		stale = run(m, t, &checks);
		if (stale < 0)
			SKIP("the %s monitor cannot start here", mrcache_monitor_name(m));
		CHECK_EQ(stale, 0);
		CHECK(checks > 0);
	}
	return test_result();
}
