/* SPDX-License-Identifier: MIT */
/* summary.c - per-syscall and per-site totals of a trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "summary.h"

/* Per address space: the last program break, and attached segments. */
struct space_bytes {
	uint32_t tgid;
	uint64_t brk;
	uint64_t shm_addr[16], shm_len[16];
};

struct mp_bytes_state {
	struct space_bytes *v;
	size_t n;
};

int mp_bytes_state_create(struct mp_bytes_state **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void mp_bytes_state_destroy(struct mp_bytes_state *s)
{
	if (s)
		free(s->v);
	free(s);
}

static struct space_bytes *space(struct mp_bytes_state *s, uint32_t tgid)
{
	struct space_bytes *v;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].tgid == tgid)
			return &s->v[i];
	v = realloc(s->v, (s->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	s->v = v;
	memset(&v[s->n], 0, sizeof(v[0]));
	v[s->n].tgid = tgid;
	return &v[s->n++];
}

uint64_t mp_event_bytes(struct mp_bytes_state *s, const struct mp_event *e)
{
	struct space_bytes *sp;
	uint64_t b = 0;

	if (e->kind == MP_EXEC || e->kind == MP_EXIT) {
		if ((sp = space(s, e->tgid)))
			memset(sp->shm_addr, 0, sizeof(sp->shm_addr)), sp->brk = 0;
		return 0;
	}
	if (e->flags & MP_EV_ERROR)
		return 0;
	switch (e->kind) {
	case MP_MMAP: case MP_MUNMAP: case MP_MADVISE:
		return e->a[1];
	case MP_MREMAP:
		return e->a[2];
	case MP_BRK:
		sp = space(s, e->tgid);
		if (!sp)
			return 0;
		if (sp->brk && e->ret)
			b = (uint64_t)e->ret > sp->brk ? (uint64_t)e->ret - sp->brk
							: sp->brk - (uint64_t)e->ret;
		sp->brk = (uint64_t)e->ret;
		return b;
	case MP_SHMAT:
		if ((sp = space(s, e->tgid)))
			for (int i = 0; i < 16; i++)
				if (!sp->shm_addr[i]) {
					sp->shm_addr[i] = (uint64_t)e->ret;
					sp->shm_len[i] = e->a[3];
					break;
				}
		return e->a[3];
	case MP_SHMDT:
		if ((sp = space(s, e->tgid)))
			for (int i = 0; i < 16; i++)
				if (sp->shm_addr[i] == e->a[0]) {
					sp->shm_addr[i] = 0;
					return sp->shm_len[i];
				}
		return 0;
	default:
		return 0;
	}
}

static int cmp_site(const void *a, const void *b)
{
	const struct mp_site_sum *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return x->site < y->site ? -1 : x->site > y->site;
}

static struct mp_site_sum *site_sum(struct mp_summary *s, uint32_t site, uint16_t kind,
				    size_t *cap)
{
	struct mp_site_sum *v;

	/* Sites number in the hundreds; a linear scan from the end finds the
	 * hot ones fast enough for a one-off summary. */
	for (size_t i = s->nsites; i-- > 0;)
		if (s->sites[i].site == site && s->sites[i].kind == kind)
			return &s->sites[i];
	if (s->nsites == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		v = realloc(s->sites, *cap * sizeof(*v));
		if (!v)
			return NULL;
		s->sites = v;
	}
	v = &s->sites[s->nsites++];
	memset(v, 0, sizeof(*v));
	v->site = site;
	v->kind = kind;
	return v;
}

int mp_summary_build(const struct mp_trace *t, struct mp_summary *s)
{
	struct mp_bytes_state *bs;
	size_t cap = 0, nlat[MP_VM_KINDS] = { 0 };
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->processes = 1;
	if (mp_bytes_state_create(&bs))
		return -ENOMEM;
	for (size_t i = 0; i < t->nev; i++)
		if (t->ev[i].kind < MP_VM_KINDS)
			s->k[t->ev[i].kind].calls++;
	for (int k = 0; k < MP_VM_KINDS; k++)
		if (s->k[k].calls && !(s->k[k].lat = malloc(s->k[k].calls * sizeof(uint64_t))))
			err = -ENOMEM;
	for (size_t i = 0; !err && i < t->nev; i++) {
		const struct mp_event *e = &t->ev[i];
		uint64_t b = mp_event_bytes(bs, e);
		struct mp_kind_sum *k;
		struct mp_site_sum *ss;

		if (e->kind == MP_FORK)
			s->processes++;
		if (e->kind == MP_IO_READ || e->kind == MP_IO_WRITE) {
			s->io_calls[e->kind - MP_IO_READ]++;
			s->io_bytes[e->kind - MP_IO_READ] += e->a[2];
		}
		if (e->kind >= MP_VM_KINDS)
			continue;
		k = &s->k[e->kind];
		k->errors += !!(e->flags & MP_EV_ERROR);
		k->bytes += b;
		k->lat_total_ns += e->lat_ns;
		k->lat[nlat[e->kind]++] = e->lat_ns;
		k->hist[mp_hist_bucket(e->lat_ns)]++;
		ss = site_sum(s, e->site, e->kind, &cap);
		if (!ss) {
			err = -ENOMEM;
			break;
		}
		ss->calls++;
		ss->bytes += b;
		ss->lat_total_ns += e->lat_ns;
	}
	for (int k = 0; k < MP_VM_KINDS; k++)
		if (s->k[k].lat)
			mp_sort_u64(s->k[k].lat, s->k[k].calls);
	if (s->nsites)
		qsort(s->sites, s->nsites, sizeof(s->sites[0]), cmp_site);
	mp_bytes_state_destroy(bs);
	if (err)
		mp_summary_free(s);
	return err;
}

void mp_summary_free(struct mp_summary *s)
{
	for (int k = 0; k < MP_VM_KINDS; k++)
		free(s->k[k].lat);
	free(s->sites);
	memset(s, 0, sizeof(*s));
}
