/* SPDX-License-Identifier: MIT */
/* owner.c - see owner.h. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "owner.h"

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Per object (string id): its kind by name, and for the others a Dwfl
 * opened at the first frame that needs a symbol. */
struct owner_obj {
	int known;		/* by_name is set */
	int by_name;		/* enum mp_owner, or -1: by symbol */
	int mrcache;		/* libmrcache*.so: unnamed code is the library's */
	Dwfl *dwfl;
	Dwfl_Module *mod;
};

/* Verdicts by (obj, vaddr): a hot call site is looked up once. */
struct owner_slot {
	uint64_t vaddr;
	uint32_t obj;		/* 0: empty */
	uint32_t owner;
};

struct mp_owners {
	const struct mp_trace *t;
	struct owner_obj *objs;
	size_t nobjs;
	struct owner_slot *slots;
	size_t cap, n;
};

int mp_owners_create(const struct mp_trace *t, struct mp_owners **out)
{
	struct mp_owners *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->t = t;
	o->cap = 1024;
	o->slots = calloc(o->cap, sizeof(*o->slots));
	if (!o->slots) {
		free(o);
		return -ENOMEM;
	}
	*out = o;
	return 0;
}

void mp_owners_destroy(struct mp_owners *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nobjs; i++)
		if (o->objs[i].dwfl)
			dwfl_end(o->objs[i].dwfl);
	free(o->objs);
	free(o->slots);
	free(o);
}

static int base_starts_with(const char *path, const char *const *prefix, size_t n)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(base, prefix[i], strlen(prefix[i])))
			return 1;
	return 0;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void obj_classify(struct owner_obj *ob, const char *path)
{
	static const char *const sys[] = { "libc.so", "libpthread.so", "libdl.so", "[vdso]",
					   "[vsyscall]" };
	static const char *const loader[] = { "ld-linux" };
	static const char *const lib[] = { "libbpf.so" };
	static const char *const mrc[] = { "libmrcache" };

	ob->known = 1;
	ob->by_name = -1;
	if (base_starts_with(path, sys, N(sys)))
		ob->by_name = MP_OWN_SYSTEM;
	else if (base_starts_with(path, loader, N(loader)))
		ob->by_name = MP_OWN_LOADER;
	else if (base_starts_with(path, lib, N(lib)))
		ob->by_name = MP_OWN_LIBRARY;
	ob->mrcache = base_starts_with(path, mrc, N(mrc));
	if (ob->by_name < 0 && path[0] == '/' && (ob->dwfl = dwfl_begin(&offline_callbacks))) {
		dwfl_report_begin(ob->dwfl);
		ob->mod = dwfl_report_elf(ob->dwfl, path, path, -1, 0, false);
		dwfl_report_end(ob->dwfl, NULL, NULL);
	}
}

static enum mp_owner by_symbol(const struct owner_obj *ob, uint64_t vaddr)
{
	/* prof.c: the spans' entry points and the functions behind its
	 * one mmap per thread and its dump (inlined or not). */
	static const char *const prof[] = { "mrc_prof_", "prof_thread", "prof_dump",
					    "prof_setup", "prof_record", "prof_outer",
					    "prof_inner_since" };
	static const char *const lib[] = { "mrcache_", "mrc_", "btf_", "btf__", "libbpf_",
					   "bpf_object" };
	const char *name = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;

	if (ob->mod)
		/* A return address may be the first byte after its function. */
		name = dwfl_module_addrinfo(ob->mod, vaddr - 1, &off, &sym, NULL, NULL, NULL);
	if (name && (!sym.st_size || off < sym.st_size)) {
		for (size_t i = 0; i < N(prof); i++)
			if (!strncmp(name, prof[i], strlen(prof[i])))
				return MP_OWN_PROFILER;
		for (size_t i = 0; i < N(lib); i++)
			if (!strncmp(name, lib[i], strlen(lib[i])))
				return MP_OWN_LIBRARY;
	}
	return ob->mrcache ? MP_OWN_LIBRARY : MP_OWN_PROGRAM;
}

static uint64_t mix(uint64_t obj, uint64_t vaddr)
{
	return (vaddr ^ (obj << 40) ^ (vaddr >> 17)) * 0x9e3779b97f4a7c15ull;
}

static int slots_grow(struct mp_owners *o)
{
	size_t ncap = o->cap * 2;
	struct owner_slot *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < o->cap; i++) {
		size_t j;

		if (!o->slots[i].obj)
			continue;
		for (j = mix(o->slots[i].obj, o->slots[i].vaddr) & (ncap - 1); n[j].obj;
		     j = (j + 1) & (ncap - 1))
			;
		n[j] = o->slots[i];
	}
	free(o->slots);
	o->slots = n;
	o->cap = ncap;
	return 0;
}

enum mp_owner mp_owner_of_frame(struct mp_owners *o, uint32_t obj, uint64_t vaddr)
{
	struct owner_obj *ob;
	enum mp_owner w;
	size_t j;

	if (!obj || obj >= o->t->nstrs)
		return MP_OWN_PROGRAM;
	if (obj >= o->nobjs) {
		size_t n = o->t->nstrs + 64;
		struct owner_obj *v = realloc(o->objs, n * sizeof(*v));

		if (!v)
			return MP_OWN_PROGRAM;
		memset(v + o->nobjs, 0, (n - o->nobjs) * sizeof(*v));
		o->objs = v;
		o->nobjs = n;
	}
	ob = &o->objs[obj];
	if (!ob->known)
		obj_classify(ob, mp_trace_str(o->t, obj));
	if (ob->by_name >= 0)
		return (enum mp_owner)ob->by_name;
	if (2 * (o->n + 1) > o->cap && slots_grow(o))
		return by_symbol(ob, vaddr);
	for (j = mix(obj, vaddr) & (o->cap - 1); o->slots[j].obj; j = (j + 1) & (o->cap - 1))
		if (o->slots[j].obj == obj && o->slots[j].vaddr == vaddr)
			return (enum mp_owner)o->slots[j].owner;
	w = by_symbol(ob, vaddr);
	o->slots[j] = (struct owner_slot){ .vaddr = vaddr, .obj = obj, .owner = (uint32_t)w };
	o->n++;
	return w;
}
