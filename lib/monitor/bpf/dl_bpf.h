/* SPDX-License-Identifier: MIT */
/*
 * dl_bpf.h - the libbpf functions the bpf monitor's loader calls, from
 * libbpf.so.1 loaded at run time (lib/common/dl.h, lib/monitor/bpf/dl_bpf.c).
 *
 * Include after <bpf/libbpf.h> and <bpf/btf.h> and before the skeleton:
 * each name below then calls through the table, so the loader (and the
 * skeleton's inline functions) read as plain libbpf code.  Only loading
 * uses libbpf; once the programs are attached the monitor holds their
 * descriptors and makes its own system calls (monitor/bpf/load.c).
 *
 * libbpf lives in a namespace of its own with its own libc (dl.h): it
 * must never free what our libc allocated, nor we what it did.  The one
 * function that would, bpf_object__destroy_skeleton() (the skeleton's
 * arrays come from our calloc), is ours: mrc_bpf_skeleton_free().  For
 * the same reason errno after a failed call is libbpf's, not ours: read it
 * with libbpf_get_error().
 */
#ifndef MRC_DL_BPF_H
#define MRC_DL_BPF_H

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MRC_LIBBPF_FUNCS(X)			\
	X(libbpf_set_print)			\
	X(libbpf_get_error)			\
	X(bpf_object__open_skeleton)		\
	X(bpf_object__load_skeleton)		\
	X(bpf_object__close)			\
	X(bpf_program__set_autoload)		\
	X(bpf_program__set_attach_target)	\
	X(bpf_program__fd)			\
	X(bpf_map__fd)				\
	X(btf__load_vmlinux_btf)		\
	X(btf__find_by_name_kind)		\
	X(btf__type_by_id)			\
	X(btf__name_by_offset)			\
	X(btf__free)

struct mrc_libbpf {
#define MRC_LIBBPF_MEMBER(f) __typeof__(f) *f;
	MRC_LIBBPF_FUNCS(MRC_LIBBPF_MEMBER)
#undef MRC_LIBBPF_MEMBER
};

extern struct mrc_libbpf mrc_libbpf;

/* Load libbpf.so.1: 0, or -EOPNOTSUPP after saying why. */
int mrc_libbpf_load(void);

/* bpf_object__destroy_skeleton() with each part freed by its own libc. */
void mrc_bpf_skeleton_free(struct bpf_object_skeleton *s);

#ifndef MRC_DL_BPF_TABLE
#define libbpf_set_print		(*mrc_libbpf.libbpf_set_print)
#define libbpf_get_error		(*mrc_libbpf.libbpf_get_error)
#define bpf_object__open_skeleton	(*mrc_libbpf.bpf_object__open_skeleton)
#define bpf_object__load_skeleton	(*mrc_libbpf.bpf_object__load_skeleton)
#define bpf_object__close		(*mrc_libbpf.bpf_object__close)
#define bpf_program__set_autoload	(*mrc_libbpf.bpf_program__set_autoload)
#define bpf_program__set_attach_target	(*mrc_libbpf.bpf_program__set_attach_target)
#define bpf_program__fd			(*mrc_libbpf.bpf_program__fd)
#define bpf_map__fd			(*mrc_libbpf.bpf_map__fd)
#define btf__load_vmlinux_btf		(*mrc_libbpf.btf__load_vmlinux_btf)
#define btf__find_by_name_kind		(*mrc_libbpf.btf__find_by_name_kind)
#define btf__type_by_id			(*mrc_libbpf.btf__type_by_id)
#define btf__name_by_offset		(*mrc_libbpf.btf__name_by_offset)
#define btf__free			(*mrc_libbpf.btf__free)
#define bpf_object__destroy_skeleton	mrc_bpf_skeleton_free
#endif

#endif
