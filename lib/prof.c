/* SPDX-License-Identifier: MIT */
/* prof.c - process-wide latency histograms, dumped as JSON at exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "prof.h"

int mrc_prof_on;

/* Relaxed atomic adds: exact counts, no lock, negligible next to the work
 * being timed (a registration, a miss). */
static uint64_t prof_hist[MRC_PROF_KINDS][MRC_PROF_BUCKETS];
static uint64_t prof_total_ns[MRC_PROF_KINDS];
static const char *prof_prefix;
static pthread_once_t prof_once = PTHREAD_ONCE_INIT;

static const char *const prof_names[MRC_PROF_KINDS] = {
	[MRC_PROF_LOOKUP] = "lookup",
	[MRC_PROF_MISS] = "miss",
	[MRC_PROF_REGISTER] = "register",
	[MRC_PROF_DEREGISTER] = "deregister",
	[MRC_PROF_WATCH] = "monitor",
	[MRC_PROF_INVALIDATE] = "invalidation",
	[MRC_PROF_MISS_OWN] = "miss_own",
	[MRC_PROF_INVALIDATE_OWN] = "invalidation_own",
};

/*
 * Nesting: register, deregister and monitor work (inner kinds) runs inside
 * misses and invalidations (outer kinds), which are added after it.  Each
 * thread remembers when its recent inner work ended and the running sum
 * of its inner time; an outer span [end - ns, end) subtracts the inner
 * time that ended inside it.  The ring holds the last PROF_RING inner
 * spans: an outer span containing more loses the oldest (its own time is
 * then overstated, never negative).
 */
#define PROF_RING 256
struct prof_inner {
	uint64_t end_ns;	/* when the inner span ended */
	uint64_t before_ns;	/* the thread's inner time before it */
};
static __thread struct prof_inner prof_ring[PROF_RING];
static __thread unsigned prof_ring_n;
static __thread uint64_t prof_inner_ns;

static int prof_is_inner(enum mrc_prof_kind kind)
{
	return kind == MRC_PROF_REGISTER || kind == MRC_PROF_DEREGISTER || kind == MRC_PROF_WATCH;
}

/* Inner time of this thread that ended at or after start. */
static uint64_t prof_inner_since(uint64_t start)
{
	unsigned n = prof_ring_n < PROF_RING ? prof_ring_n : PROF_RING;
	uint64_t before = prof_inner_ns;

	for (unsigned i = 1; i <= n; i++) {
		const struct prof_inner *e = &prof_ring[(prof_ring_n - i) % PROF_RING];

		if (e->end_ns < start)
			break;
		before = e->before_ns;
	}
	return prof_inner_ns - before;
}

const char *mrc_prof_kind_name(enum mrc_prof_kind kind)
{
	return kind < MRC_PROF_KINDS ? prof_names[kind] : "invalid";
}

static void prof_dump(void)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%d.json", prof_prefix, (int)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "{\"pid\": %d, \"kinds\": {", (int)getpid());
	for (int k = 0; k < MRC_PROF_KINDS; k++) {
		fprintf(f, "%s\n  \"%s\": {\"total_ns\": %llu, \"log2_ns\": [", k ? "," : "",
			prof_names[k], (unsigned long long)prof_total_ns[k]);
		for (int b = 0; b < MRC_PROF_BUCKETS; b++)
			fprintf(f, "%s%llu", b ? ", " : "",
				(unsigned long long)__atomic_load_n(&prof_hist[k][b], __ATOMIC_RELAXED));
		fputs("]}", f);
	}
	fputs("\n}}\n", f);
	fclose(f);
}

static void prof_setup(void)
{
	prof_prefix = getenv("MRCACHE_PROF");
	if (prof_prefix && *prof_prefix && atexit(prof_dump) == 0)
		mrc_prof_on = 1;
}

void mrc_prof_init(void)
{
	pthread_once(&prof_once, prof_setup);
}

static void prof_record(enum mrc_prof_kind kind, uint64_t ns)
{
	int b = ns ? 63 - __builtin_clzll(ns) : 0;

	if (b >= MRC_PROF_BUCKETS)
		b = MRC_PROF_BUCKETS - 1;
	__atomic_fetch_add(&prof_hist[kind][b], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&prof_total_ns[kind], ns, __ATOMIC_RELAXED);
}

void mrc_prof_add(enum mrc_prof_kind kind, uint64_t ns)
{
	uint64_t now, inner;

	if (kind >= MRC_PROF_MISS_OWN)
		return;
	prof_record(kind, ns);
	if (prof_is_inner(kind)) {
		prof_ring[prof_ring_n++ % PROF_RING] =
			(struct prof_inner){ mrc_now_ns(), prof_inner_ns };
		prof_inner_ns += ns;
	} else if (kind == MRC_PROF_MISS || kind == MRC_PROF_INVALIDATE) {
		now = mrc_now_ns();
		inner = prof_inner_since(now > ns ? now - ns : 0);
		prof_record(kind == MRC_PROF_MISS ? MRC_PROF_MISS_OWN : MRC_PROF_INVALIDATE_OWN,
			    ns > inner ? ns - inner : 0);
	}
}
