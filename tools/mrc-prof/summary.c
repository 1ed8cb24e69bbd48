/* SPDX-License-Identifier: MIT */
/* summary.c - per-syscall and per-site totals of a trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "spaces.h"
#include "summary.h"
#include "vmranges.h"

/* Bytes need the events of their space before them (the old break, the
 * attached segments): per address space, a vmranges.h state. */
struct space_bytes {
	uint32_t tgid;		/* first: spaces.h */
	struct mp_vm_state vm;
};

struct bytes_state {
	struct space_bytes *v;
	size_t n;
};

static int bytes_state_create(struct bytes_state **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

static void bytes_state_destroy(struct bytes_state *s)
{
	if (s)
		free(s->v);
	free(s);
}

static uint64_t shm_len(const struct mp_vm_state *vm, uint64_t addr)
{
	for (int i = 0; i < MP_SHM_SLOTS; i++)
		if (vm->shm_addr[i] == addr)
			return vm->shm_len[i];
	return 0;
}

static uint64_t event_bytes(struct bytes_state *s, const struct mp_event *e)
{
	struct space_bytes *sp = mp_space_get((void **)&s->v, &s->n, sizeof(*sp), e->tgid, NULL);
	uint64_t b = 0, ret = (uint64_t)e->ret;
	struct mp_range rg[2];
	enum mp_inv_cause cause;

	if (!sp)
		return 0;
	if (!(e->flags & MP_EV_ERROR)) {
		switch (e->kind) {
		case MP_MMAP: case MP_MUNMAP: case MP_MADVISE:
			b = e->a[1];
			break;
		case MP_MREMAP:
			b = e->a[2];
			break;
		case MP_BRK:
			if (sp->vm.brk && ret)
				b = ret > sp->vm.brk ? ret - sp->vm.brk : sp->vm.brk - ret;
			break;
		case MP_SHMAT:
			b = e->a[3];
			break;
		case MP_SHMDT:
			b = shm_len(&sp->vm, e->a[0]);
			break;
		}
	}
	mp_vm_ranges(&sp->vm, e, rg, &cause);	/* the state after e */
	return b;
}

/* Every frame in the dynamic loader: mapping libraries before main. */
static int site_is_loader(const struct mp_trace *t, uint32_t site)
{
	const struct mp_site *s = &t->sites[site];

	for (uint32_t i = 0; i < s->nframes; i++)
		if (!strstr(mp_trace_str(t, s->frames[i].obj), "/ld-linux"))
			return 0;
	return s->nframes > 0;
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
	struct bytes_state *bs;
	size_t cap = 0, nlat[MP_VM_KINDS] = { 0 };
	int err = 0;

	memset(s, 0, sizeof(*s));
	s->processes = 1;
	if (bytes_state_create(&bs))
		return -ENOMEM;
	for (size_t i = 0; i < t->nev; i++)
		if (t->ev[i].kind < MP_VM_KINDS && !(t->ev[i].flags & MP_EV_NOT_PROGRAM))
			s->k[t->ev[i].kind].calls++;
	for (int k = 0; k < MP_VM_KINDS; k++)
		if (s->k[k].calls && !(s->k[k].lat = malloc(s->k[k].calls * sizeof(uint64_t))))
			err = -ENOMEM;
	for (size_t i = 0; !err && i < t->nev; i++) {
		const struct mp_event *e = &t->ev[i];
		uint64_t b = event_bytes(bs, e);
		struct mp_kind_sum *k;
		struct mp_site_sum *ss;

		if (e->kind == MP_FORK)
			s->processes++;
		/* What the call moved, not the buffer's length (a 2.6 MB
		 * buffer may receive 4 KiB). */
		uint64_t moved = !(e->flags & MP_EV_ERROR) && e->ret > 0 ? (uint64_t)e->ret : 0;

		if (mp_event_is_buffer(e, 0)) {
			s->io_calls[e->kind - MP_IO_READ]++;
			s->io_bytes[e->kind - MP_IO_READ] += moved;
			s->io_uring += !!(e->flags & MP_EV_URING);
			s->io_fixed += !!(e->flags & MP_EV_FIXED);
		} else if (e->kind == MP_IO_READ || e->kind == MP_IO_WRITE) {
			s->lib_io_calls++;
			s->lib_io_bytes += moved;
		}
		if (e->kind >= MP_VM_KINDS)
			continue;
		if (e->flags & MP_EV_NOT_PROGRAM) {
			int o = e->flags & MP_EV_PROFILER ? MP_NP_PROFILER : MP_NP_LIBRARY;

			s->np[o][e->kind].calls++;
			s->np[o][e->kind].bytes += b;
			continue;
		}
		if (e->site && site_is_loader(t, e->site))
			s->loader_vm_ns += e->lat_ns;
		k = &s->k[e->kind];
		k->errors += !!(e->flags & MP_EV_ERROR);
		k->bytes += b;
		k->lat_total_ns += e->lat_ns;
		s->vm_ns += e->lat_ns;
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
	bytes_state_destroy(bs);
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
