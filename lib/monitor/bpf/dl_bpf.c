/* SPDX-License-Identifier: MIT */
/* dl_bpf.c - libbpf.so.1's functions for the bpf monitor (dl_bpf.h). */
#ifdef MRC_HAVE_BPF
#include <stdlib.h>
#define MRC_DL_BPF_TABLE
#include "common/dl.h"
#include "monitor/bpf/dl_bpf.h"

MRC_DL_NOTE(mrc_dl_note_libbpf, "bpf-monitor",
	    "the bpf monitor (MRCACHE_MONITOR=bpf, and auto without the mrmon module)",
	    "recommended", "libbpf.so.1");

struct mrc_libbpf mrc_libbpf;

static const struct mrc_dl_sym syms[] = {
#define MRC_LIBBPF_SYM(f) { #f, NULL, (void **)&mrc_libbpf.f },
	MRC_LIBBPF_FUNCS(MRC_LIBBPF_SYM)
#undef MRC_LIBBPF_SYM
	{ NULL, NULL, NULL }
};

static const struct mrc_dl_lib libbpf = {
	.what = "monitor bpf",
	.soname = "libbpf.so.1",
	.package = "libbpf1",
	.isolate = 1,
	.syms = syms,
};

int mrc_libbpf_load(void)
{
	return mrc_dl_load(&libbpf);
}

void mrc_bpf_skeleton_free(struct bpf_object_skeleton *s)
{
	if (!s)
		return;
	if (s->obj && *s->obj)
		mrc_libbpf.bpf_object__close(*s->obj);
	free(s->maps);
	free(s->progs);
	free(s);
}
#endif
