/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the in-memory trace, string and site interning, and the trace
 * file (layout in docs/mrc-prof.md, "Trace file format").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace.h"

#define MP_MAGIC	"MRCPROF1"
#define MP_VERSION	2u

struct mp_file_header {
	char magic[8];
	uint32_t version;
	uint32_t event_size;
	uint64_t duration_ns;
	uint64_t overhead_ns;
	uint32_t buffer_min;
	int32_t exit_status;
	uint32_t nstrs;
	uint32_t nsites;
	uint64_t nev;
	uint32_t lib_dumps;
	uint32_t unwind;
	uint64_t program_cpu_ns;
	uint64_t tracer_cpu_ns;
};

_Static_assert(sizeof(struct mp_event) == 72, "event record layout");
_Static_assert(sizeof(struct mp_file_header) == 80, "header layout");

static const char *const kind_names[MP_KINDS] = {
	[MP_MMAP] = "mmap", [MP_MUNMAP] = "munmap", [MP_MREMAP] = "mremap",
	[MP_MADVISE] = "madvise", [MP_BRK] = "brk", [MP_SHMAT] = "shmat",
	[MP_SHMDT] = "shmdt", [MP_IO_READ] = "io-read", [MP_IO_WRITE] = "io-write",
	[MP_FORK] = "fork", [MP_EXEC] = "exec", [MP_EXIT] = "exit",
};

const char *mp_kind_name(enum mp_kind kind)
{
	return kind < MP_KINDS ? kind_names[kind] : "invalid";
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 64;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

void mp_trace_init(struct mp_trace *t)
{
	memset(t, 0, sizeof(*t));
}

void mp_trace_free(struct mp_trace *t)
{
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->ev);
	free(t->sites);
	free(t->command);
	memset(t, 0, sizeof(*t));
}

int mp_trace_add_event(struct mp_trace *t, const struct mp_event *ev)
{
	if (grow((void **)&t->ev, &t->cap_ev, t->nev + 1, sizeof(*ev)))
		return -ENOMEM;
	t->ev[t->nev++] = *ev;
	return 0;
}

/* Id 0 is the empty string and the unknown site, so that a zeroed field
 * means "none" in memory and in the file. */
static int ensure_zero_entries(struct mp_trace *t)
{
	if (!t->nstrs) {
		if (grow((void **)&t->strs, &t->cap_strs, 1, sizeof(char *)))
			return -ENOMEM;
		t->strs[0] = strdup("");
		if (!t->strs[0])
			return -ENOMEM;
		t->nstrs = 1;
	}
	if (!t->nsites) {
		if (grow((void **)&t->sites, &t->cap_sites, 1, sizeof(struct mp_site)))
			return -ENOMEM;
		memset(&t->sites[0], 0, sizeof(t->sites[0]));
		t->nsites = 1;
	}
	return 0;
}

long mp_trace_intern(struct mp_trace *t, const char *s)
{
	char *dup;

	if (ensure_zero_entries(t))
		return -ENOMEM;
	if (!*s)
		return 0;
	/* Strings are object paths and symbol names of call sites: a few
	 * hundred, interned once per mapping or site, so a scan is enough. */
	for (size_t i = t->nstrs; i-- > 1;)
		if (!strcmp(t->strs[i], s))
			return (long)i;
	if (grow((void **)&t->strs, &t->cap_strs, t->nstrs + 1, sizeof(char *)))
		return -ENOMEM;
	dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	t->strs[t->nstrs] = dup;
	return (long)t->nstrs++;
}

const char *mp_trace_str(const struct mp_trace *t, uint32_t id)
{
	return id < t->nstrs ? t->strs[id] : "";
}

int mp_trace_add_site(struct mp_trace *t, const struct mp_site *s, uint32_t *id)
{
	if (ensure_zero_entries(t) ||
	    grow((void **)&t->sites, &t->cap_sites, t->nsites + 1, sizeof(*s)))
		return -ENOMEM;
	t->sites[t->nsites] = *s;
	*id = (uint32_t)t->nsites++;
	return 0;
}

/* --- file --- */

static int put(FILE *f, const void *p, size_t n)
{
	return fwrite(p, 1, n, f) == n ? 0 : -EIO;
}

static int put_str(FILE *f, const char *s)
{
	uint32_t len = (uint32_t)strlen(s);

	return put(f, &len, sizeof(len)) ?: put(f, s, len);
}

int mp_trace_save(const struct mp_trace *t, const char *path)
{
	struct mp_file_header h = {
		.version = MP_VERSION, .event_size = sizeof(struct mp_event),
		.duration_ns = t->duration_ns, .overhead_ns = t->overhead_ns,
		.buffer_min = t->buffer_min, .exit_status = t->exit_status,
		.nstrs = (uint32_t)t->nstrs, .nsites = (uint32_t)t->nsites,
		.nev = t->nev, .lib_dumps = t->lib.dumps,
		.program_cpu_ns = t->program_cpu_ns, .tracer_cpu_ns = t->tracer_cpu_ns,
		.unwind = t->unwind,
	};
	FILE *f = fopen(path, "wb");
	int err = 0;

	if (!f)
		return -errno;
	memcpy(h.magic, MP_MAGIC, 8);
	err = put(f, &h, sizeof(h));
	for (size_t i = 1; !err && i < t->nstrs; i++)
		err = put_str(f, t->strs[i]);
	if (!err)
		err = put_str(f, t->command ? t->command : "");
	for (size_t i = 1; !err && i < t->nsites; i++) {
		const struct mp_site *s = &t->sites[i];

		err = put(f, &s->nframes, sizeof(s->nframes));
		if (!err)
			err = put(f, s->frames, s->nframes * sizeof(s->frames[0]));
	}
	if (!err && t->nev)
		err = put(f, t->ev, t->nev * sizeof(t->ev[0]));
	if (!err)
		err = put(f, t->lib.total_ns, sizeof(t->lib.total_ns)) ?:
		      put(f, t->lib.hist, sizeof(t->lib.hist));
	if (fclose(f) && !err)
		err = -EIO;
	return err;
}

static int get(FILE *f, void *p, size_t n)
{
	return fread(p, 1, n, f) == n ? 0 : -EINVAL;
}

static char *get_str(FILE *f)
{
	uint32_t len;
	char *s;

	if (get(f, &len, sizeof(len)) || len > (1u << 20))
		return NULL;
	s = malloc(len + 1);
	if (!s)
		return NULL;
	if (get(f, s, len) || memchr(s, 0, len)) {
		free(s);
		return NULL;
	}
	s[len] = 0;
	return s;
}

static int check_event(const struct mp_trace *t, const struct mp_event *e)
{
	if (e->kind >= MP_KINDS || e->site >= t->nsites)
		return -EINVAL;
	if (e->kind == MP_EXEC && e->a[0] >= t->nstrs)
		return -EINVAL;
	return 0;
}

static int check_site(const struct mp_trace *t, const struct mp_site *s)
{
	if (s->nframes > MP_MAX_FRAMES)
		return -EINVAL;
	for (uint32_t i = 0; i < s->nframes; i++)
		if (s->frames[i].obj >= t->nstrs || s->frames[i].sym >= t->nstrs)
			return -EINVAL;
	return 0;
}

static int load(struct mp_trace *t, FILE *f)
{
	struct mp_file_header h;

	if (get(f, &h, sizeof(h)) || memcmp(h.magic, MP_MAGIC, 8))
		return -EINVAL;
	/* Version 1 recorded no I/O result: its I/O moved what it asked. */
	if ((h.version != MP_VERSION && h.version != 1) || h.event_size != sizeof(struct mp_event) ||
	    !h.nstrs || !h.nsites || h.nev > (1ull << 32) || h.unwind > 1)
		return -EINVAL;
	if (ensure_zero_entries(t))
		return -ENOMEM;
	t->duration_ns = h.duration_ns;
	t->overhead_ns = h.overhead_ns;
	t->buffer_min = h.buffer_min;
	t->exit_status = h.exit_status;
	t->lib.dumps = h.lib_dumps;
	t->program_cpu_ns = h.program_cpu_ns;
	t->unwind = h.unwind;
	t->tracer_cpu_ns = h.tracer_cpu_ns;
	for (uint32_t i = 1; i < h.nstrs; i++) {
		char *s = get_str(f);

		if (!s)
			return -EINVAL;
		if (grow((void **)&t->strs, &t->cap_strs, t->nstrs + 1, sizeof(char *))) {
			free(s);
			return -ENOMEM;
		}
		t->strs[t->nstrs++] = s;
	}
	t->command = get_str(f);
	if (!t->command)
		return -EINVAL;
	for (uint32_t i = 1; i < h.nsites; i++) {
		struct mp_site s = { 0 };
		uint32_t id;

		if (get(f, &s.nframes, sizeof(s.nframes)) || s.nframes > MP_MAX_FRAMES ||
		    get(f, s.frames, s.nframes * sizeof(s.frames[0])) || check_site(t, &s))
			return -EINVAL;
		if (mp_trace_add_site(t, &s, &id))
			return -ENOMEM;
	}
	if (grow((void **)&t->ev, &t->cap_ev, h.nev ? h.nev : 1, sizeof(struct mp_event)))
		return -ENOMEM;
	if (h.nev && get(f, t->ev, h.nev * sizeof(struct mp_event)))
		return -EINVAL;
	t->nev = h.nev;
	for (size_t i = 0; i < t->nev; i++) {
		struct mp_event *e = &t->ev[i];

		if (check_event(t, e))
			return -EINVAL;
		if (h.version == 1 && (e->kind == MP_IO_READ || e->kind == MP_IO_WRITE))
			e->ret = (int64_t)e->a[2];
	}
	if (get(f, t->lib.total_ns, sizeof(t->lib.total_ns)) ||
	    get(f, t->lib.hist, sizeof(t->lib.hist)))
		return -EINVAL;
	return fgetc(f) == EOF ? 0 : -EINVAL;
}

int mp_trace_load(struct mp_trace *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	int err;

	if (!f) {
		err = -errno;
		fprintf(stderr, "mrc-prof: %s: %s\n", path, strerror(-err));
		return err;
	}
	mp_trace_init(t);
	err = load(t, f);
	fclose(f);
	if (err) {
		fprintf(stderr, "mrc-prof: %s: %s\n", path, err == -EINVAL ?
			"not a valid mrc-prof trace (version 1 or 2)" : strerror(-err));
		mp_trace_free(t);
	}
	return err;
}
