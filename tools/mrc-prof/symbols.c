/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - libdwfl symbol lookup, one Dwfl session per object file.
 * C++ names are demangled with libstdc++'s __cxa_demangle when it can be
 * had at run time (already loaded, or dlopen'ed): mrc-prof itself is C and
 * links no C++ runtime; without one, names stay mangled.
 */
#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "symbols.h"

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static demangle_fn demangler(void)
{
	static demangle_fn fn;
	static int tried;
	void *lib;

	if (tried)
		return fn;
	tried = 1;
	fn = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (!fn && (lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL)))
		fn = (demangle_fn)dlsym(lib, "__cxa_demangle");
	return fn;
}

/* The name as a reader knows it: "ns::f(int)" for "_ZN2ns1fEi". */
static long intern_symbol(struct mp_trace *t, const char *name)
{
	demangle_fn fn = name[0] == '_' && name[1] == 'Z' ? demangler() : NULL;
	char *plain = NULL;
	int status = -1;
	long id;

	if (fn)
		plain = fn(name, NULL, NULL, &status);
	id = mp_trace_intern(t, status == 0 && plain ? plain : name);
	free(plain);
	return id;
}

/* A module reported at base 0 sees addresses as the ELF file does: the
 * frames already hold ELF virtual addresses (maps.c). */
static int name_frames_of(struct mp_trace *t, uint32_t obj)
{
	const char *path = mp_trace_str(t, obj);
	Dwfl *dwfl;
	Dwfl_Module *mod;

	if (path[0] != '/')
		return 0;
	dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl)
		return 0;
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, -1, 0, false);
	dwfl_report_end(dwfl, NULL, NULL);
	for (size_t s = 1; mod && s < t->nsites; s++) {
		for (uint32_t i = 0; i < t->sites[s].nframes; i++) {
			struct mp_frame *f = &t->sites[s].frames[i];
			GElf_Off off = 0;
			GElf_Sym sym;
			const char *name;
			long id;

			if (f->obj != obj || f->sym)
				continue;
			/* A return address may be the first byte after its
			 * function (a call to a noreturn function): look up
			 * the byte before it. */
			name = dwfl_module_addrinfo(mod, f->vaddr - 1, &off, &sym,
						    NULL, NULL, NULL);
			if (!name || (sym.st_size && off >= sym.st_size))
				continue;
			id = intern_symbol(t, name);
			if (id < 0) {
				dwfl_end(dwfl);
				return -ENOMEM;
			}
			f->sym = (uint32_t)id;
			f->sym_off = off + 1;
		}
	}
	dwfl_end(dwfl);
	return 0;
}

int mp_symbolize(struct mp_trace *t)
{
	uint32_t *done = calloc(t->nstrs + 1, sizeof(*done));
	int err = 0;

	if (!done)
		return -ENOMEM;
	for (size_t s = 1; !err && s < t->nsites; s++) {
		for (uint32_t i = 0; !err && i < t->sites[s].nframes; i++) {
			uint32_t obj = t->sites[s].frames[i].obj;

			if (obj < t->nstrs && !done[obj]) {
				done[obj] = 1;
				err = name_frames_of(t, obj);
			}
		}
	}
	free(done);
	return err;
}

size_t mp_mark_library_io(struct mp_trace *t, int include)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nev; i++) {
		struct mp_event *e = &t->ev[i];

		if (e->kind != MP_IO_READ && e->kind != MP_IO_WRITE)
			continue;
		if (include)
			e->flags &= (uint16_t)~MP_EV_NOT_PROGRAM;
		n += !!(e->flags & MP_EV_NOT_PROGRAM);
	}
	return n;
}

void mp_frame_format(const struct mp_trace *t, const struct mp_frame *f, char *buf, size_t len)
{
	const char *obj = mp_trace_str(t, f->obj), *base = strrchr(obj, '/');

	base = base ? base + 1 : obj;
	if (f->sym)
		snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", mp_trace_str(t, f->sym),
			 f->sym_off, base);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, base, f->vaddr);
}
