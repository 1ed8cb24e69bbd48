/* SPDX-License-Identifier: MIT */
/*
 * dl.h - optional dependencies loaded at run time (lib/common/dl.c).
 *
 * libmrcache needs libibverbs only for the verbs backend and libbpf only
 * for the bpf monitor, so it does not link them: an io_uring user loads
 * neither (nor libnl, libelf, zlib), and a package can recommend them
 * instead of depending on them.  The part that needs one loads its
 * versioned soname on first use and resolves the few functions it calls
 * into a table; a missing library is a clear -EOPNOTSUPP.
 *
 * MRC_DL_NOTE() records each such dependency in the ELF note
 * `.note.dlopen` (the "ELF dlopen metadata" format of systemd and the
 * Fedora/Debian packaging tools), so that packagers can find them with
 * `readelf -n` or dlopen-notes.
 */
#ifndef MRC_DL_H
#define MRC_DL_H

#include "monitor/monitor.h"	/* mrc_log */

struct mrc_dl_sym {
	const char *name;
	const char *version;	/* NULL: the default version */
	void **addr;
};

struct mrc_dl_lib {
	const char *what;	/* "verbs backend", for messages */
	const char *soname;	/* "libibverbs.so.1" */
	const char *package;	/* the Debian package that ships it */
	/* Load into a link-map namespace of its own (dlmopen): the library
	 * then has its own copy of libc, so its allocations leave the
	 * application's malloc state (the mmap threshold) as it was.  Only
	 * for libraries that share no objects with the application. */
	int isolate;
	const struct mrc_dl_sym *syms;	/* ends with { NULL } */
};

/* Load lib once per process and fill its table: 0, or -EOPNOTSUPP after
 * saying why (not installed, a symbol missing).  Thread-safe; a failure
 * is remembered and reported again on every call.  Call it in every
 * thread before it calls into an isolated library: it readies the
 * namespace's libc for the calling thread. */
int mrc_dl_load(const struct mrc_dl_lib *lib);

/* The ELF dlopen note: feature, description, priority ("required",
 * "recommended" or "suggested") and the soname, as string literals. */
#define MRC_DL_NOTE_JSON(feature, description, priority, soname)		\
	"[{\"feature\":\"" feature "\",\"description\":\"" description	\
	"\",\"priority\":\"" priority "\",\"soname\":[\"" soname "\"]}]"

#define MRC_DL_NOTE_(id, json)						\
	__attribute__((used, section(".note.dlopen"), aligned(4)))	\
	static const struct {						\
		unsigned namesz, descsz, type;				\
		char name[4];						\
		char desc[sizeof(json)];				\
	} id = { 4, sizeof(json), 0x407c0c0a, "FDO", json }

#define MRC_DL_NOTE(id, feature, description, priority, soname)	\
	MRC_DL_NOTE_(id, MRC_DL_NOTE_JSON(feature, description, priority, soname))

#endif
