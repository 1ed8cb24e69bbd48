/* SPDX-License-Identifier: MIT */
/*
 * bench.h - mrc-bench: mrcache side by side with UCX's ucs_rcache and with
 * no cache at all.
 *
 * Every measurement runs in a child process of its own (child.c): hooks that
 * one peer installs (UCX patches libc's munmap) never tax another, and memory
 * deltas belong to one cache.  The parent interleaves peers round by round so
 * that noise from other work on the machine hits them alike, and reports
 * medians over rounds.
 */
#ifndef MRC_BENCH_H
#define MRC_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "mrcache.h"

#define BENCH_MAX_METRICS 6
#define BENCH_MAX_PARAMS 4
#define BENCH_MAX_ROUNDS 31
#define BENCH_WHY_LEN 200

/* ---- peers: the caches compared ---- */

enum peer_kind {
	PEER_NOCACHE,		/* register and deregister on every use */
	PEER_UCX,		/* UCX's ucs_rcache */
	PEER_MRCACHE,		/* this project, one row per monitor */
};

/* How a peer pins memory: the same callbacks for every peer. */
enum bench_pin {
	PIN_NOOP,		/* a counting no-op: the cache's own cost */
	PIN_URING,		/* io_uring fixed buffers: real pins */
};

struct bench_peer;

struct peer_ops {
	/* -errno and a reason in p->why when the peer cannot run here. */
	int (*open)(struct bench_peer *p);
	void (*close)(struct bench_peer *p);
	/* *ref is what put() takes back; *key the backend key (uring index). */
	int (*get)(struct bench_peer *p, void *addr, size_t len, void **ref,
		   uint64_t *key);
	void (*put)(struct bench_peer *p, void *ref);
	/* Reclaim invalidations the monitor deferred to the next call. */
	void (*progress)(struct bench_peer *p);
	/* Backend registrations so far; NULL: the shared pins' count. */
	uint64_t (*registrations)(struct bench_peer *p);
	/* Regions cached now, or -1 when the peer cannot tell.  May be NULL. */
	long (*cached)(struct bench_peer *p);
	/* Between measurements: drop every unused region.  May be NULL. */
	void (*reset)(struct bench_peer *p);
};

struct bench_peer {
	char name[32];			/* table label */
	enum peer_kind kind;
	enum mrcache_monitor_kind monitor;	/* PEER_MRCACHE */
	unsigned flags;			/* MRCACHE_FLAG_NO_MERGE */
	const struct peer_ops *ops;
	/* Set by the workload before open(). */
	enum bench_pin pin;
	struct bench_pins *pins;
	void *priv;
	char why[BENCH_WHY_LEN];
};

extern const struct peer_ops peer_nocache_ops;
extern const struct peer_ops peer_ucx_ops;
extern const struct peer_ops peer_mrcache_ops;

static inline int peer_get(struct bench_peer *p, void *addr, size_t len,
			   void **ref)
{
	uint64_t key;

	return p->ops->get(p, addr, len, ref, &key);
}

/* ---- pins.c: the registration callbacks every peer shares ---- */

struct io_uring;

/* One thread's registration counts: the no-cache peer registers from
 * every thread of the threads workload, so each counts in a stripe of
 * its own (one line, one writer) and nothing on its get or put is a
 * shared write.  A thread takes the next stripe at its first count; the
 * threads of one run are created one after the other, at most 9 of them,
 * so no two share one. */
#define PIN_STRIPES 16
struct pin_stripe {
	uint64_t regs, deregs;
	uint64_t bytes_now, bytes_peak, bytes_total;
} __attribute__((aligned(64)));

struct bench_pins {
	enum bench_pin kind;
	struct io_uring *ring;		/* PIN_URING */
	unsigned slots;
	int table;			/* sparse table registered */
	unsigned nfree;
	unsigned *free_slots;		/* stack of unused table slots */
	size_t *slot_len;
	/* The stripes' sums, as of the last pins_sync() (bytes_peak: the
	 * sum of each thread's peak, exact for one thread). */
	uint64_t regs, deregs;
	uint64_t bytes_now, bytes_peak, bytes_total;
	struct pin_stripe stripe[PIN_STRIPES];
};

int pins_open(struct bench_pins *b, enum bench_pin kind, unsigned slots);
void pins_close(struct bench_pins *b);
int pins_reg(struct bench_pins *b, void *addr, size_t len, void **handle,
	     uint64_t *key);
int pins_dereg(struct bench_pins *b, void *handle);
/* Add the stripes up into regs, deregs and the byte counts. */
void pins_sync(struct bench_pins *b);
/* Counting starts again from here (bytes_now stays). */
void pins_reset(struct bench_pins *b);

static inline uint64_t peer_registrations(struct bench_peer *p)
{
	if (p->ops->registrations)
		return p->ops->registrations(p);
	pins_sync(p->pins);
	return p->pins->regs;
}

/* ---- workloads ---- */

struct bench_opts {
	int quick;			/* smoke run: tiny sizes */
	int reuse;			/* one worker per peer for all samples */
	long ops;			/* operations per hit sample */
	int verbose;
};

struct workload {
	const char *name;
	const char *what;		/* one line for --list and the docs */
	const char *param_name;		/* "regions", "threads", ... */
	long params[BENCH_MAX_PARAMS];	/* 0-terminated */
	long quick_params[BENCH_MAX_PARAMS];
	int nmetrics;
	const char *metric[BENCH_MAX_METRICS];	/* name, unit inside */
	int lower_is_better;		/* for metric 0, in plots */
	int uring;			/* needs real pins */
	int merge_peers;		/* also run the NO_MERGE variants */
	int fresh;			/* a new worker for every measurement */
	/* mallopt(M_MMAP_THRESHOLD) in the worker before anything else, so
	 * every peer runs with the same allocator state (needs fresh); 0:
	 * glibc's dynamic threshold, whatever opening the peer left. */
	int mmap_threshold;
	/* In the child: measure once, fill v[0..nmetrics). */
	int (*run)(struct bench_peer *p, long param,
		   const struct bench_opts *o, double *v);
};

extern const struct workload wl_hits, wl_misses, wl_threads, wl_invalidate,
	wl_invalidate_bulk, wl_churn, wl_churn_fixed, wl_unrelated, wl_memory,
	wl_merge_prefix, wl_merge_window;

/* ---- child.c: worker processes ---- */

struct bench_sample {
	int status;			/* 0, or -errno */
	double v[BENCH_MAX_METRICS];	/* worker_start: v[0] = open seconds */
	char why[BENCH_WHY_LEN];
};

struct worker {
	int pid;			/* 0: not running */
	int to, from;			/* pipes to and from it */
};

/* Fork a worker that opens a copy of proto with the given pins, set up for
 * workload w (its allocator state; NULL: none in particular).  Returns
 * s->status: 0, or -errno with s->why (the worker is gone then). */
int worker_start(struct worker *wk, const struct bench_peer *proto,
		 enum bench_pin pin, const struct workload *w,
		 const struct bench_opts *o, struct bench_sample *s);
int worker_run(struct worker *wk, const struct workload *w, long param,
	       struct bench_sample *s);
void worker_stop(struct worker *wk);

/* ---- util.c ---- */

uint64_t now_ns(void);
uint64_t rng_next(uint64_t *state);
double median(double *v, int n);

/*
 * Batches: a loop timed in short slices and the median slice reported, so
 * that a slice in which another process had the CPU (two cores shared with
 * other work) does not move the figure.
 */
struct batches {
	int n, cap;
	double *per_op;			/* ns per operation, one per slice */
};

int batches_init(struct batches *b, int cap);
void batches_add(struct batches *b, uint64_t ns, long ops);
double batches_median(struct batches *b);	/* frees the slices */
size_t page_size(void);
/* An anonymous mapping of n small pages, touched or not; NULL on failure. */
void *pages_map(size_t n);
void *pages_reserve(size_t n);
/* Bytes malloc has handed out and bytes resident, now. */
size_t mem_malloced(void);
size_t mem_resident(void);
/* Would malloc serve 1 MiB from mmap now?  1 or 0: glibc's chunk header
 * (IS_MMAPPED).  An mmapped probe block is kept, not freed: freeing one is
 * what raises glibc's dynamic threshold. */
int malloc_mmaps_1m(void);
/* Addresses of n one-page regions with a gap page between neighbours, so
 * that no cache merges them. */
void **regions_layout(void *base, size_t n);

/* ---- results: report.c, report_md.c, report_svg.c, targets.c ---- */

struct bench_result {
	const struct workload *w;
	long param;
	char peer[32];
	int status;
	char why[BENCH_WHY_LEN];
	int rounds;
	double samples[BENCH_MAX_METRICS][BENCH_MAX_ROUNDS];
	double med[BENCH_MAX_METRICS];
};

struct bench_target {
	char name[96];
	char goal[48];
	double value;			/* NAN: could not be measured */
	int met;
	char note[240];
};

struct bench_run {
	struct bench_result *res;
	int nres;
	struct bench_target targets[128];
	int ntargets;
	int rounds;
	char command[512];
	int nproc;
	char cpu[128];
	char kernel[192];
	char date[64];
};

const struct bench_result *run_find(const struct bench_run *r,
				    const char *wl, long param,
				    const char *peer);
void targets_compute(struct bench_run *r);
/* Rows res[first..nres), under a header for their workload; peers that
 * cannot start here are listed once at the top instead. */
void report_rows(const struct bench_run *r, int first, FILE *out);
void report_targets(const struct bench_run *r, FILE *out);
int report_json(const struct bench_run *r, const char *path);
int report_svg(const struct bench_run *r, const char *dir);
/* svg_prefix: where the plots are, relative to the Markdown file (NULL:
 * no plots). */
int report_markdown(const struct bench_run *r, const char *path,
		    const char *svg_prefix);
void machine_describe(struct bench_run *r);

/* ---- metric.c: how results are shown and judged ---- */

/* The metric is a time in ns (its name has the word "ns"). */
int metric_is_ns(const char *name);
/* Its column header once the unit moved into the values. */
const char *metric_label(const char *name, char *buf, size_t len);
/* Value of metric m: "150 µs" for times (sep between number and unit),
 * plain digits otherwise, never an exponent. */
const char *metric_format(const struct workload *w, int m, double v,
			  const char *sep, char *buf, size_t len);
/* Stale reads in the worst round (0: valid).  A result with any is
 * INVALID: marked on tables and plots, never ranked. */
long result_stale(const struct bench_result *x);
/* The allocator state x ran with (the "1M mmap" metric) differs from
 * that of no cache in the same workload: not comparable, never ranked. */
int result_state_differs(const struct bench_run *r, const struct bench_result *x);
/* A row of several threads whose median "CPUs busy" is below
 * BUSY_MIN: the threads took turns on the cores instead of running at
 * once, so the row says nothing of contention.  INVALID, never ranked. */
#define BUSY_METRIC "CPUs busy"
#define BUSY_MIN 1.8
int result_took_turns(const struct bench_result *x);
/* x is the best valid, comparable result of its workload and parameter
 * (and has such a rival). */
int result_fastest(const struct bench_run *r, const struct bench_result *x);

#endif
