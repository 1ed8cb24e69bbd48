/* SPDX-License-Identifier: MIT */
/*
 * mrc-bench - mrcache against UCX's ucs_rcache and against no cache, with
 * every monitor that starts here, side by side in one run.
 *
 *   mrc-bench [--workload LIST] [--peers LIST] [--rounds N] [--quick]
 *             [--json FILE] [--svg DIR] [--markdown FILE] [--list]
 *             [--verbose]
 *
 * Each (workload, parameter) is measured round by round, every peer once
 * per round in a rotating order, each peer in a worker process of its own
 * (child.c); a row reports the median over rounds.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static const struct workload *const workloads[] = {
	&wl_hits, &wl_misses, &wl_threads, &wl_invalidate, &wl_invalidate_bulk,
	&wl_churn, &wl_churn_fixed, &wl_unrelated, &wl_memory, &wl_merge_prefix,
	&wl_merge_window,
};
#define NWORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

static const enum mrcache_monitor_kind monitors[] = {
	MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
	MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
};
#define NMONITORS (sizeof(monitors) / sizeof(monitors[0]))
#define MAX_PEERS (2 + 2 * NMONITORS)

struct peer_slot {
	struct bench_peer peer;
	int selected;
	int available;			/* its no-op worker started */
	char why[BENCH_WHY_LEN];
	struct worker wk[2];		/* by enum bench_pin */
	int wk_failed[2];
	char wk_why[2][BENCH_WHY_LEN];
};

static struct peer_slot peers[MAX_PEERS];
static int npeers;

static void peer_add(const char *name, enum peer_kind kind,
		     const struct peer_ops *ops,
		     enum mrcache_monitor_kind mon, unsigned flags)
{
	struct bench_peer *p = &peers[npeers++].peer;

	snprintf(p->name, sizeof(p->name), "%s", name);
	p->kind = kind;
	p->ops = ops;
	p->monitor = mon;
	p->flags = flags;
}

static void peers_build(void)
{
	char name[32];

	peer_add("nocache", PEER_NOCACHE, &peer_nocache_ops, 0, 0);
	peer_add("ucx", PEER_UCX, &peer_ucx_ops, 0, 0);
	for (size_t i = 0; i < NMONITORS; i++) {
		snprintf(name, sizeof(name), "mrcache/%s",
			 mrcache_monitor_name(monitors[i]));
		peer_add(name, PEER_MRCACHE, &peer_mrcache_ops, monitors[i], 0);
	}
	for (size_t i = 0; i < NMONITORS; i++) {
		snprintf(name, sizeof(name), "mrcache/%s+nomerge",
			 mrcache_monitor_name(monitors[i]));
		peer_add(name, PEER_MRCACHE, &peer_mrcache_ops, monitors[i],
			 MRCACHE_FLAG_NO_MERGE);
	}
}

/* A token selects a peer by its name, or every mrcache peer of a monitor
 * ("uffd"), or all mrcache peers ("mrcache"). */
static int peer_matches(const struct bench_peer *p, const char *tok)
{
	if (!strcmp(tok, p->name) || !strcmp(tok, "all"))
		return 1;
	if (p->kind != PEER_MRCACHE)
		return 0;
	return !strcmp(tok, "mrcache") ||
	       !strcmp(tok, mrcache_monitor_name(p->monitor));
}

static int select_list(const char *list, int (*match)(int idx, const char *tok),
		       int count, int *selected, const char *what)
{
	char *copy = strdup(list), *save = NULL;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int found = 0;

		for (int i = 0; i < count; i++)
			if (match(i, tok))
				selected[i] = found = 1;
		if (!found) {
			fprintf(stderr, "mrc-bench: unknown %s '%s' (--list)\n",
				what, tok);
			ret = -EINVAL;
		}
	}
	free(copy);
	return ret;
}

static int match_peer(int idx, const char *tok)
{
	return peer_matches(&peers[idx].peer, tok);
}

static int match_workload(int idx, const char *tok)
{
	return !strcmp(tok, "all") || !strcmp(tok, workloads[idx]->name);
}

/* The worker of peer i for pins `pin`, started on first use; NULL (and
 * the reason in s) when it cannot start. */
static struct worker *peer_worker(int i, enum bench_pin pin,
				  const struct bench_opts *o,
				  struct bench_sample *s)
{
	struct peer_slot *ps = &peers[i];

	if (ps->wk[pin].pid > 0)
		return &ps->wk[pin];
	if (ps->wk_failed[pin]) {
		s->status = -ENOTSUP;
		snprintf(s->why, sizeof(s->why), "%s", ps->wk_why[pin]);
		return NULL;
	}
	if (worker_start(&ps->wk[pin], &ps->peer, pin, NULL, o, s) < 0) {
		ps->wk_failed[pin] = 1;
		snprintf(ps->wk_why[pin], sizeof(ps->wk_why[pin]), "%s", s->why);
		return NULL;
	}
	return &ps->wk[pin];
}

/* Which peers start here, and how long opening one takes. */
static void peers_probe(const struct bench_opts *o)
{
	struct bench_sample s;

	for (int i = 0; i < npeers; i++) {
		if (!peers[i].selected)
			continue;
		peers[i].available = peer_worker(i, PIN_NOOP, o, &s) != NULL;
		snprintf(peers[i].why, sizeof(peers[i].why), "%s", s.why);
		if (peers[i].peer.flags)
			continue;
		if (peers[i].available)
			printf("# %-14s opens in %.3f s\n", peers[i].peer.name,
			       s.v[0]);
		else
			printf("# %-14s unavailable: %s\n", peers[i].peer.name,
			       s.why);
	}
}

static void peers_stop(void)
{
	for (int i = 0; i < npeers; i++)
		for (int pin = 0; pin < 2; pin++)
			worker_stop(&peers[i].wk[pin]);
}

/* One measurement of peer i: in a worker of its own (the default: where a
 * process's memory landed, huge pages or not, then differs from round to
 * round instead of biasing every round alike), or with --reuse in the
 * peer's long-lived worker (for monitors that are slow to start). */
static void sample(int i, const struct workload *w, long param,
		   const struct bench_opts *o, struct bench_sample *s)
{
	enum bench_pin pin = w->uring ? PIN_URING : PIN_NOOP;
	struct worker fresh, *wk;

	if (w->fresh || !o->reuse) {
		if (worker_start(&fresh, &peers[i].peer, pin, w, o, s) < 0)
			return;
		worker_run(&fresh, w, param, s);
		worker_stop(&fresh);
		return;
	}
	wk = peer_worker(i, pin, o, s);
	if (wk)
		worker_run(wk, w, param, s);
}

static int peer_in_workload(const struct peer_slot *s,
			    const struct workload *w)
{
	return s->selected && (w->merge_peers || s->peer.flags == 0);
}

static void measure(struct bench_run *run, const struct workload *w,
		    long param, int rounds, const struct bench_opts *o)
{
	struct bench_result *res[MAX_PEERS] = { 0 };
	int order[MAX_PEERS], n = 0;

	for (int i = 0; i < npeers; i++) {
		struct bench_result *r;

		if (!peer_in_workload(&peers[i], w))
			continue;
		r = &run->res[run->nres++];
		memset(r, 0, sizeof(*r));
		r->w = w;
		r->param = param;
		snprintf(r->peer, sizeof(r->peer), "%.31s", peers[i].peer.name);
		if (!peers[i].available) {
			r->status = -ENOTSUP;
			snprintf(r->why, sizeof(r->why), "unavailable: %.185s",
				 peers[i].why);
			continue;
		}
		res[i] = r;
		order[n++] = i;
	}
	for (int round = 0; round < rounds; round++) {
		for (int k = 0; k < n; k++) {
			int i = order[(k + round) % n];
			struct bench_result *r = res[i];
			struct bench_sample s;

			if (r->status < 0)
				continue;
			sample(i, w, param, o, &s);
			if (s.status < 0) {
				r->status = s.status;
				snprintf(r->why, sizeof(r->why), "failed: %.190s",
					 s.why);
				continue;
			}
			for (int m = 0; m < w->nmetrics; m++)
				r->samples[m][r->rounds] = s.v[m];
			r->rounds++;
		}
	}
	for (int k = 0; k < n; k++) {
		struct bench_result *r = res[order[k]];

		for (int m = 0; m < w->nmetrics; m++)
			r->med[m] = median(r->samples[m], r->rounds);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mrc-bench [options]\n"
		"  --workload LIST  comma-separated workloads (default all; --list)\n"
		"  --peers LIST     nocache, ucx, mrcache, a monitor name (none, hooks,\n"
		"                   uffd, bpf, kernel) or a full peer name (default all)\n"
		"  --rounds N       measurements per row, median reported (default 5)\n"
		"  --quick          smoke run: small sizes, one round unless --rounds\n"
		"  --ops N          get+put per hit sample (default 2000000)\n"
		"  --param N        run the selected workloads with this one parameter\n"
		"                   (regions, threads, iterations...) instead of theirs\n"
		"  --json FILE      write every sample and the targets as JSON\n"
		"  --svg DIR        write one SVG plot per workload into DIR\n"
		"  --markdown FILE  write the tables, targets and plots as Markdown\n"
		"                   (plots linked as if FILE were in DIR)\n"
		"  --list           list workloads and peers, then exit\n"
		"  --reuse          one worker process per peer for every sample\n"
		"                   (default: a fresh process per sample)\n"
		"  --verbose        let measurements write to stderr\n");
}

static void help(void)
{
	printf("mrc-bench - mrcache against UCX's ucs_rcache and against no cache\n\n"
	       "Every workload (hits, misses, threads, invalidation, churn, unrelated VM\n"
	       "activity, memory, merges; --list) is measured for every peer: no cache,\n"
	       "UCX's rcache and mrcache under each monitor that starts here, each in a\n"
	       "worker process of its own, round by round; a row reports the median.  The\n"
	       "run ends with the performance targets, met or not (docs/benchmarks.md).\n\n");
	usage(stdout);
}

static void list(void)
{
	printf("workloads:\n");
	for (size_t i = 0; i < NWORKLOADS; i++)
		printf("  %-16s %s\n", workloads[i]->name, workloads[i]->what);
	printf("peers:\n");
	for (int i = 0; i < npeers; i++)
		printf("  %s\n", peers[i].peer.name);
}

static void command_line(struct bench_run *run, int argc, char **argv)
{
	size_t off = 0;

	for (int i = 0; i < argc && off < sizeof(run->command); i++)
		off += (size_t)snprintf(run->command + off,
					sizeof(run->command) - off, "%s%s",
					i ? " " : "", argv[i]);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "peers", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "quick", no_argument, NULL, 'q' },
		{ "ops", required_argument, NULL, 'o' },
		{ "param", required_argument, NULL, 'P' },
		{ "json", required_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 's' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "list", no_argument, NULL, 'l' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "reuse", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *wl_list = "all", *peer_list = "all", *json = NULL,
		   *svg = NULL, *markdown = NULL;
	struct bench_opts o = { .ops = 2000000 };
	int wsel[NWORKLOADS] = { 0 }, psel[MAX_PEERS] = { 0 };
	struct bench_run run = { 0 };
	int rounds = 0, c, status = 0;
	long param = 0;
	char *end;

	/* A worker that died shows up as EPIPE on its pipe, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	peers_build();
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'w': wl_list = optarg; break;
		case 'p': peer_list = optarg; break;
		case 'r':
			rounds = (int)strtol(optarg, &end, 10);
			if (*end || rounds < 1 || rounds > BENCH_MAX_ROUNDS) {
				fprintf(stderr, "mrc-bench: --rounds takes 1..%d\n",
					BENCH_MAX_ROUNDS);
				return 2;
			}
			break;
		case 'q': o.quick = 1; break;
		case 'o':
			o.ops = strtol(optarg, &end, 10);
			if (*end || o.ops < 100) {
				fprintf(stderr, "mrc-bench: --ops takes a number >= 100\n");
				return 2;
			}
			break;
		case 'P':
			param = strtol(optarg, &end, 10);
			if (*end || param < 1) {
				fprintf(stderr, "mrc-bench: --param takes a number >= 1\n");
				return 2;
			}
			break;
		case 'j': json = optarg; break;
		case 's': svg = optarg; break;
		case 'm': markdown = optarg; break;
		case 'l': list(); return 0;
		case 'v': o.verbose = 1; break;
		case 'R': o.reuse = 1; break;
		case 'h': help(); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mrc-bench: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!rounds)
		rounds = o.quick ? 1 : 5;
	if (o.quick && o.ops == 2000000)
		o.ops = 20000;
	if (select_list(wl_list, match_workload, NWORKLOADS, wsel, "workload") ||
	    select_list(peer_list, match_peer, npeers, psel, "peer"))
		return 2;
	for (int i = 0; i < npeers; i++)
		peers[i].selected = psel[i];

	command_line(&run, argc, argv);
	machine_describe(&run);
	run.rounds = rounds;
	run.res = calloc(NWORKLOADS * BENCH_MAX_PARAMS * MAX_PEERS,
			 sizeof(*run.res));
	if (!run.res)
		return 1;
	printf("# mrc-bench %s: %d CPUs, %s, %s; %d round%s, medians\n",
	       run.date, run.nproc, run.cpu, run.kernel, rounds,
	       rounds > 1 ? "s" : "");
	peers_probe(&o);

	for (size_t i = 0; i < NWORKLOADS; i++) {
		const struct workload *w = workloads[i];
		const long *params = o.quick ? w->quick_params : w->params;
		const long one[] = { param, 0 };
		int first = run.nres;

		uint64_t t0 = now_ns();

		if (!wsel[i])
			continue;
		if (param)
			params = one;
		for (int k = 0; k < BENCH_MAX_PARAMS && params[k]; k++)
			measure(&run, w, params[k], rounds, &o);
		report_rows(&run, first, stdout);
		printf("(%s: %.1f s)\n", w->name, (double)(now_ns() - t0) / 1e9);
		fflush(stdout);
	}
	peers_stop();
	targets_compute(&run);
	report_targets(&run, stdout);
	if (json && report_json(&run, json) < 0)
		status = 1;
	if (svg && report_svg(&run, svg) < 0)
		status = 1;
	if (markdown && report_markdown(&run, markdown, svg ? "" : NULL) < 0)
		status = 1;
	for (int i = 0; i < run.nres; i++)
		if (run.res[i].status < 0 && run.res[i].status != -ENOTSUP)
			status = 1;
	free(run.res);
	return status;
}
