/* SPDX-License-Identifier: MIT */
/*
 * targets.c - the goals of issues 6 and 16 as ratios of figures measured side by
 * side in this run, one line per mrcache monitor that ran.  A missed goal
 * is printed with the figures behind it, never dropped.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "bench.h"

static const char *const monitor_names[] = {
	"none", "hooks", "uffd", "bpf", "kernel",
};
#define NMON (sizeof(monitor_names) / sizeof(monitor_names[0]))

static long largest_param(const struct bench_run *r, const char *wl)
{
	long best = 0;

	for (int i = 0; i < r->nres; i++)
		if (!strcmp(r->res[i].w->name, wl) && r->res[i].param > best)
			best = r->res[i].param;
	return best;
}

static const struct bench_result *ok(const struct bench_run *r,
				     const char *wl, long param,
				     const char *peer)
{
	const struct bench_result *x = run_find(r, wl, param, peer);

	return x && x->status == 0 && x->rounds > 0 ? x : NULL;
}

static struct bench_target *add(struct bench_run *r, const char *goal,
				const char *fmt, const char *arg)
{
	struct bench_target *t;

	if (r->ntargets >= (int)(sizeof(r->targets) / sizeof(r->targets[0])))
		return NULL;
	t = &r->targets[r->ntargets++];
	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), fmt, arg);
	snprintf(t->goal, sizeof(t->goal), "%s", goal);
	t->value = NAN;
	return t;
}

static void hit_target(struct bench_run *r, const char *mon, const char *peer)
{
	long n = largest_param(r, "hits");
	const struct bench_result *m = ok(r, "hits", n, peer);
	const struct bench_result *u = ok(r, "hits", n, "ucx");
	struct bench_target *t;

	if (!m || !(t = add(r, ">= 2.5", "hit speed-up over UCX (%s)", mon)))
		return;
	snprintf(t->name + strlen(t->name), sizeof(t->name) - strlen(t->name),
		 " @%ld", n);
	if (!u) {
		snprintf(t->note, sizeof(t->note), "UCX did not run");
		return;
	}
	t->value = u->med[0] / m->med[0];
	t->met = t->value >= 2.5;
	snprintf(t->note, sizeof(t->note), "mrcache %.1f ns, UCX %.1f ns",
		 m->med[0], u->med[0]);
}

/* A row whose threads took turns measures no contention: the target is
 * n/a, with why. */
static int took_turns(struct bench_target *t, const struct bench_result *x)
{
	if (!result_took_turns(x))
		return 0;
	for (int m = 0; m < x->w->nmetrics; m++)
		if (!strcmp(x->w->metric[m], BUSY_METRIC))
			snprintf(t->note, sizeof(t->note),
				 "INVALID: the threads took turns (%.2f CPUs busy)", x->med[m]);
	return 1;
}

static void threads_target(struct bench_run *r, const char *mon,
			   const char *peer)
{
	static const long more[] = { 2, 4, 8 };
	const struct bench_result *m1 = ok(r, "threads", 1, peer);
	const struct bench_result *m2 = ok(r, "threads", 2, peer);
	const struct bench_result *u1 = ok(r, "threads", 1, "ucx");
	const struct bench_result *u2 = ok(r, "threads", 2, "ucx");
	struct bench_target *t;
	char name[64];
	size_t len;

	if (!m1)
		return;
	if (m2 && (t = add(r, ">= 1.8", "2 threads / 1 thread, wall (%s)", mon)) &&
	    !took_turns(t, m2)) {
		t->value = m2->med[1] / m1->med[1];
		t->met = t->value >= 1.8;
		len = (size_t)snprintf(t->note, sizeof(t->note),
				       "%.1f vs %.1f Mops/s", m2->med[1], m1->med[1]);
		if (u1 && u2 && len < sizeof(t->note))
			snprintf(t->note + len, sizeof(t->note) - len,
				 "; UCX %.2fx (%.1f vs %.1f Mops/s)",
				 u2->med[1] / u1->med[1], u2->med[1], u1->med[1]);
	}
	/* CPU time per hit with N threads over one thread's (issue 16 5):
	 * what contention costs, whatever share of the cores they got. */
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++) {
		const struct bench_result *mn = ok(r, "threads", more[i], peer);
		const struct bench_result *un = ok(r, "threads", more[i], "ucx");

		snprintf(name, sizeof(name), "CPU ns/hit, %ld threads / 1 (%%s)", more[i]);
		if (!mn || !(t = add(r, "<= 1.1", name, mon)) || took_turns(t, mn))
			continue;
		t->value = mn->med[0] / m1->med[0];
		t->met = t->value <= 1.1;
		len = (size_t)snprintf(t->note, sizeof(t->note),
				       "%.1f vs %.1f CPU ns/op", mn->med[0], m1->med[0]);
		if (u1 && un && len < sizeof(t->note))
			snprintf(t->note + len, sizeof(t->note) - len,
				 "; UCX %.2fx (%.1f vs %.1f)", un->med[0] / u1->med[0],
				 un->med[0], u1->med[0]);
	}
}

/* Churn (issue 16 2): every monitor at least 1.5x faster than no cache
 * and faster than UCX, in each allocator-state variant.  A peer with
 * stale reads is invalid, and one whose allocator state differs from no
 * cache's is not comparable: both are n/a with the reason. */
static void churn_variant(struct bench_run *r, const char *wl, const char *mon,
			  const char *peer)
{
	long n = largest_param(r, wl);
	const struct bench_result *m = ok(r, wl, n, peer);
	const struct bench_result *b = ok(r, wl, n, "nocache");
	const struct bench_result *u = ok(r, wl, n, "ucx");
	struct bench_target *t1, *t2;
	char name[64];

	if (!m)
		return;
	snprintf(name, sizeof(name), "%s: speed-up over no cache (%%s)", wl);
	t1 = add(r, ">= 1.5", name, mon);
	snprintf(name, sizeof(name), "%s: speed-up over UCX (%%s)", wl);
	t2 = add(r, ">= 1.0", name, mon);
	if (!t1 || !t2)
		return;
	if (result_stale(m)) {
		snprintf(t1->note, sizeof(t1->note), "INVALID: %ld stale reads",
			 result_stale(m));
		memcpy(t2->note, t1->note, sizeof(t2->note));
		return;
	}
	if (b && b->med[3] != m->med[3]) {
		snprintf(t1->note, sizeof(t1->note), "allocator state differs from "
			 "no cache's (1 MiB malloc mmapped: %.0f vs %.0f)",
			 m->med[3], b->med[3]);
		memcpy(t2->note, t1->note, sizeof(t2->note));
		return;
	}
	if (b) {
		t1->value = b->med[0] / m->med[0];
		t1->met = t1->value >= 1.5;
		snprintf(t1->note, sizeof(t1->note), "%.1f vs %.1f us/iter",
			 m->med[0] / 1e3, b->med[0] / 1e3);
	} else {
		snprintf(t1->note, sizeof(t1->note), "no-cache row missing");
	}
	if (u && u->med[3] == m->med[3]) {
		t2->value = u->med[0] / m->med[0];
		t2->met = t2->value >= 1.0;
		snprintf(t2->note, sizeof(t2->note), "%.1f vs %.1f us/iter",
			 m->med[0] / 1e3, u->med[0] / 1e3);
	} else {
		snprintf(t2->note, sizeof(t2->note), u ? "UCX's allocator state "
			 "differs" : "UCX did not run");
	}
}

static void churn_target(struct bench_run *r, const char *mon, const char *peer)
{
	churn_variant(r, "churn", mon, peer);
	churn_variant(r, "churn-fixed", mon, peer);
}

/* What the cache adds per region: munmap of a cached page minus munmap of
 * an uncached one in the same process, plus the reclaim. */
static void invalidate_target(struct bench_run *r, const char *mon,
			      const char *peer)
{
	long n = largest_param(r, "invalidate");
	const struct bench_result *m = ok(r, "invalidate", n, peer);
	const struct bench_result *u = ok(r, "invalidate", n, "ucx");
	const struct bench_result *b = ok(r, "invalidate", n, "nocache");
	double floor = b ? fabs(b->med[0]) : 0;
	struct bench_target *t;

	if (!m || !(t = add(r, "<= 0.5", "invalidation cost / UCX's (%s)", mon)))
		return;
	if (m->med[4] < 0.99) {
		snprintf(t->note, sizeof(t->note),
			 "only %.0f%% of regions were dropped: no invalidation "
			 "to compare", 100 * m->med[4]);
		return;
	}
	if (!u) {
		snprintf(t->note, sizeof(t->note), "UCX did not run");
		return;
	}
	/* No cache has nothing to invalidate: its `added` is the noise. */
	if (u->med[0] <= floor || m->med[0] <= floor) {
		snprintf(t->note, sizeof(t->note),
			 "added per region: mrcache %.0f ns, UCX %.0f ns: not "
			 "above the noise (no-cache row %.0f ns)", m->med[0],
			 u->med[0], floor);
		return;
	}
	t->value = m->med[0] / u->med[0];
	t->met = t->value <= 0.5;
	snprintf(t->note, sizeof(t->note),
		 "added per region: mrcache %.0f ns, UCX %.0f ns "
		 "(munmap of an uncached page %.0f ns)", m->med[0], u->med[0],
		 m->med[2]);
}

static void miss_target(struct bench_run *r, const char *mon, const char *peer)
{
	long n = largest_param(r, "misses");
	const struct bench_result *m = ok(r, "misses", n, peer);
	const struct bench_result *u = ok(r, "misses", n, "ucx");
	const struct bench_result *b = ok(r, "misses", n, "nocache");
	struct bench_target *t;
	double mx, ux;

	if (!m || !(t = add(r, "<= 1.0", "miss overhead / UCX's (%s)", mon)))
		return;
	if (!u || !b) {
		snprintf(t->note, sizeof(t->note), "UCX or no-cache row missing");
		return;
	}
	mx = m->med[0] - b->med[0];
	ux = u->med[0] - b->med[0];
	t->value = mx / ux;
	t->met = t->value <= 1.0;
	snprintf(t->note, sizeof(t->note),
		 "beyond the backend: mrcache %.0f ns, UCX %.0f ns", mx, ux);
}

static void memory_target(struct bench_run *r, const char *mon,
			  const char *peer)
{
	long n = largest_param(r, "memory");
	const struct bench_result *m = ok(r, "memory", n, peer);
	const struct bench_result *u = ok(r, "memory", n, "ucx");
	struct bench_target *t;

	if (!m || !(t = add(r, "<= 128", "user bytes per cached region (%s)", mon)))
		return;
	if (m->med[3] < 0.99) {
		snprintf(t->note, sizeof(t->note),
			 "at %ld regions the cache kept only %.0f%% of them",
			 n, 100 * m->med[3]);
		return;
	}
	t->value = m->med[0];
	t->met = t->value <= 128;
	snprintf(t->note, sizeof(t->note), "at %ld regions; UCX %.0f B", n,
		 u ? u->med[0] : NAN);
}

/* Kernel monitor: the unmapping thread's munmap of a watched range. */
static void kernel_targets(struct bench_run *r)
{
	long n = largest_param(r, "invalidate");
	const struct bench_result *k = ok(r, "invalidate", n, "mrcache/kernel");
	const struct bench_result *u = ok(r, "invalidate", n, "mrcache/uffd");
	struct bench_target *t1, *t2;

	t1 = add(r, "<= 1.3", "%s", "munmap watched / unwatched (kernel)");
	t2 = add(r, ">= 3", "%s", "munmap uffd / kernel");
	if (!t1 || !t2)
		return;
	if (!k) {
		snprintf(t1->note, sizeof(t1->note),
			 "kernel monitor did not run here (guest run)");
		memcpy(t2->note, t1->note, sizeof(t2->note));
		return;
	}
	/* The median of per-sample ratios: each sample timed both halves in
	 * alternating slices of one process. */
	t1->value = k->med[5];
	t1->met = t1->value <= 1.3;
	snprintf(t1->note, sizeof(t1->note),
		 "median of per-sample ratios; medians %.0f vs %.0f ns",
		 k->med[1], k->med[2]);
	if (u) {
		t2->value = u->med[1] / k->med[1];
		t2->met = t2->value >= 3;
		snprintf(t2->note, sizeof(t2->note), "%.0f vs %.0f ns",
			 u->med[1], k->med[1]);
	} else {
		snprintf(t2->note, sizeof(t2->note), "uffd monitor did not run");
	}
}

void targets_compute(struct bench_run *r)
{
	void (*const each[])(struct bench_run *, const char *, const char *) = {
		hit_target, threads_target, invalidate_target, miss_target,
		memory_target, churn_target,
	};
	char peer[32];

	for (size_t f = 0; f < sizeof(each) / sizeof(each[0]); f++)
		for (size_t i = 0; i < NMON; i++) {
			snprintf(peer, sizeof(peer), "mrcache/%s",
				 monitor_names[i]);
			each[f](r, monitor_names[i], peer);
		}
	if (largest_param(r, "invalidate"))
		kernel_targets(r);
}
