/* SPDX-License-Identifier: MIT */
/* verdict.c - run-time shares and break-even block sizes. */
#include <inttypes.h>
#include "verdict.h"

/* Per use of L bytes: a registration costs r + rb L (plus its
 * deregistration), a cached use lookup + (1 - h) of that; copying costs
 * cb L.  Break-even: L = fixed / (cb - per-byte). */
double mp_breakeven_bytes(const struct mp_sim_config *c, double hit_rate)
{
	double miss = 1 - hit_rate;
	double fixed = c->lookup_ns * (hit_rate > 0) + miss * (c->reg_ns + c->dereg_ns);
	double per_byte = c->copy_ns_per_byte -
			  miss * (c->reg_ns_per_byte + c->dereg_ns_per_byte);

	return per_byte > 0 ? fixed / per_byte : 0;
}

int mp_verdict_small(const struct mp_analysis *a, size_t conf)
{
	const struct mp_sim_result *r = &a->res[conf];
	double saved = r->nocache_ns - mp_sim_total_ns(r);

	return !r->uses || (a->t->duration_ns && saved < 0.01 * (double)a->t->duration_ns);
}

static void size_text(double b, char *buf, size_t len)
{
	if (b <= 0)
		snprintf(buf, len, "no size (copying is cheaper per byte)");
	else if (b >= 1 << 20)
		snprintf(buf, len, "%.1f MiB", b / (1 << 20));
	else
		snprintf(buf, len, "%.0f KiB", b / 1024 < 1 ? 1 : b / 1024);
}

void mp_verdict_text(FILE *f, const struct mp_analysis *a)
{
	const struct mp_summary *s = &a->sum;
	double run = (double)a->t->duration_ns;
	char once[64], cached[64];

	if (!mp_verdict_small(a, 0))
		return;
	fprintf(f, "  verdict: %s: ", a->res[0].uses ? "a cache would save little here"
		: "no I/O buffer large enough to register");
	fprintf(f, "the VM calls took %.3f ms, %.2f%% of the %.3f s run",
		(double)s->vm_ns / 1e6, run > 0 ? 100 * (double)s->vm_ns / run : 0, run / 1e9);
	if (s->loader_vm_ns)
		fprintf(f, " (%.3f ms of it the loader's, before main)",
			(double)s->loader_vm_ns / 1e6);
	fprintf(f, ".\n");
	for (size_t i = 0; i < a->nconf; i++) {
		const struct mp_sim_result *r = &a->res[i];
		double h = r->uses ? (double)r->hits / (double)r->uses : 0.9;

		size_text(mp_breakeven_bytes(&a->conf[i], 0), once, sizeof(once));
		size_text(mp_breakeven_bytes(&a->conf[i], h), cached, sizeof(cached));
		fprintf(f, "  %s: registering pays over copying at %.2f ns/B from blocks of %s "
			"registered per use, and of %s with a cache hitting %.0f%% (%s)\n",
			a->conf[i].name, a->conf[i].copy_ns_per_byte, once, cached, 100 * h,
			r->uses ? "this run's hit rate" : "assumed: no buffer here");
	}
}
