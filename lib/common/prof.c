/* SPDX-License-Identifier: MIT */
/* prof.c - process-wide latency histograms, dumped as JSON at exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "common/prof.h"

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
#define PROF_RING 255
struct prof_inner {
	uint64_t end_ns;	/* when the inner span ended */
	uint64_t before_ns;	/* the thread's inner time before it */
};

/*
 * One page per thread that profiles, mapped at its first span, not a
 * thread-local array: the library's TLS must stay a few bytes, or a
 * dlopen() after start-up finds no room for it in glibc's static TLS
 * surplus (tests/test-dlopen.c).  Raw system calls, because a span can end
 * in a signal handler (an munmap there) and because the hooks monitor
 * interposes munmap; the key's value is a plain store in glibc for the
 * first keys, so setting it there is safe too.
 */
struct prof_thread {
	uint64_t inner_ns;	/* the thread's inner time so far */
	unsigned ring_n;	/* inner spans recorded so far */
	struct prof_inner ring[PROF_RING];
};
_Static_assert(sizeof(struct prof_thread) <= 4096, "one page per thread");

static __thread struct prof_thread *prof_self;
static pthread_key_t prof_key;
static int prof_key_ok;

static void prof_thread_free(void *t)
{
	syscall(SYS_munmap, t, sizeof(struct prof_thread));
}

/* The calling thread's state, or NULL (no memory: spans keep their whole
 * time, inner work included). */
static struct prof_thread *prof_thread(void)
{
	void *p;

	if (prof_self || !prof_key_ok)
		return prof_self;
	p = (void *)syscall(SYS_mmap, NULL, sizeof(struct prof_thread), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (pthread_setspecific(prof_key, p)) {
		prof_thread_free(p);
		return NULL;
	}
	prof_self = p;
	return p;
}

static int prof_is_inner(enum mrc_prof_kind kind)
{
	return kind == MRC_PROF_REGISTER || kind == MRC_PROF_DEREGISTER || kind == MRC_PROF_WATCH;
}

/* Inner time of this thread that ended at or after start. */
static uint64_t prof_inner_since(uint64_t start)
{
	struct prof_thread *t = prof_thread();
	unsigned n;
	uint64_t before;

	if (!t)
		return 0;
	n = t->ring_n < PROF_RING ? t->ring_n : PROF_RING;
	before = t->inner_ns;
	for (unsigned i = 1; i <= n; i++) {
		const struct prof_inner *e = &t->ring[(t->ring_n - i) % PROF_RING];

		if (e->end_ns <= start)
			break;
		before = e->before_ns;
	}
	return t->inner_ns - before;
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
	if (prof_prefix && *prof_prefix && atexit(prof_dump) == 0) {
		prof_key_ok = pthread_key_create(&prof_key, prof_thread_free) == 0;
		mrc_prof_on = 1;
	}
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

/* An outer span [t0, t0 + ns): its own time is ns minus the inner work
 * that ended inside it. */
static void prof_outer(enum mrc_prof_kind kind, uint64_t t0, uint64_t ns)
{
	uint64_t inner = prof_inner_since(t0);

	prof_record(kind == MRC_PROF_MISS ? MRC_PROF_MISS_OWN : MRC_PROF_INVALIDATE_OWN,
		    ns > inner ? ns - inner : 0);
}

static int prof_is_outer(enum mrc_prof_kind kind)
{
	return kind == MRC_PROF_MISS || kind == MRC_PROF_INVALIDATE;
}

void mrc_prof_add(enum mrc_prof_kind kind, uint64_t ns)
{
	/* Derived kinds are prof.c's own; an outer span needs its start. */
	if (kind >= MRC_PROF_MISS_OWN || prof_is_outer(kind))
		return;
	prof_record(kind, ns);
	if (prof_is_inner(kind)) {
		struct prof_thread *t = prof_thread();

		if (t) {
			t->ring[t->ring_n++ % PROF_RING] = (struct prof_inner){ mrc_now_ns(), t->inner_ns };
			t->inner_ns += ns;
		}
	}
}

void mrc_prof_add_span(enum mrc_prof_kind kind, uint64_t t0)
{
	uint64_t ns = mrc_now_ns() - t0;

	if (!prof_is_outer(kind)) {
		mrc_prof_add(kind, ns);
		return;
	}
	prof_record(kind, ns);
	prof_outer(kind, t0, ns);
}
