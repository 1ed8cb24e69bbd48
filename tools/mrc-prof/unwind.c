/* SPDX-License-Identifier: MIT */
/* unwind.c - libdwfl unwinding of ptrace-stopped threads. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "spaces.h"
#include "unwind.h"

struct uspace {
	uint32_t tgid;		/* first: spaces.h */
	Dwfl *dwfl;
};

struct mp_unwinder {
	struct uspace *sp;
	size_t nsp;
};

static char *debuginfo_path;
static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

int mp_unwinder_create(struct mp_unwinder **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void mp_unwinder_destroy(struct mp_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nsp; i++)
		if (u->sp[i].dwfl)
			dwfl_end(u->sp[i].dwfl);
	free(u->sp);
	free(u);
}

void mp_unwinder_forget(struct mp_unwinder *u, pid_t tgid)
{
	for (size_t i = 0; i < u->nsp; i++) {
		if (u->sp[i].tgid != (uint32_t)tgid)
			continue;
		if (u->sp[i].dwfl)
			dwfl_end(u->sp[i].dwfl);
		mp_space_remove(u->sp, &u->nsp, sizeof(u->sp[0]), i);
		return;
	}
}

/* The threads are stopped by us already: libdwfl must not attach. */
static Dwfl *session(pid_t tgid)
{
	Dwfl *dwfl = dwfl_begin(&proc_callbacks);

	if (!dwfl)
		return NULL;
	if (dwfl_linux_proc_report(dwfl, tgid) || dwfl_report_end(dwfl, NULL, NULL) ||
	    dwfl_linux_proc_attach(dwfl, tgid, true)) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}

struct walk {
	Dwfl *dwfl;
	uint64_t *ret;
	int max, n, outside;	/* outside: a pc in no reported module */
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (activation)		/* the thread's own pc, not a return address */
		return DWARF_CB_OK;
	if (!dwfl_addrmodule(w->dwfl, pc - 1)) {
		w->outside = 1;
		return DWARF_CB_ABORT;
	}
	w->ret[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int mp_unwind(struct mp_unwinder *u, pid_t tgid, pid_t tid, uint64_t ip, uint64_t *ret,
	      int max)
{
	struct uspace *sp = mp_space_get((void **)&u->sp, &u->nsp, sizeof(*sp),
					 (uint32_t)tgid, NULL);
	struct walk w = { .ret = ret, .max = max };

	if (!sp || max <= 0)
		return 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (!sp->dwfl)
			sp->dwfl = session(tgid);
		if (!sp->dwfl)
			return 0;
		w.dwfl = sp->dwfl;
		w.n = 0;
		w.outside = 0;
		if (!dwfl_addrmodule(sp->dwfl, ip)) {
			w.outside = 1;	/* the syscall's own code is new to us */
		} else {
			dwfl_getthread_frames(sp->dwfl, tid, frame_cb, &w);
		}
		if (!w.outside || w.n)
			break;
		/* The pc or the first caller lies in no module we know: a
		 * library was mapped since the session began.  Start over. */
		dwfl_end(sp->dwfl);
		sp->dwfl = NULL;
	}
	return w.n;
}
