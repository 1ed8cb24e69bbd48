/* SPDX-License-Identifier: MIT */
/*
 * monitor_bpf_load.c - open the bpf monitor's programs, pick the attach
 * variant from the running kernel's BTF, load and attach them.
 *
 * The zap variant (fexit on the page-table paths) sees every caller and
 * costs nothing on other system calls; some kernels refuse fentry/fexit
 * (EPERM), and function prototypes move between releases, so its argument
 * positions are looked up by name in BTF and any failure falls back to the
 * syscall variant (tp_btf/sys_exit).  MRCACHE_BPF_VARIANT=zap|syscall
 * forces one (tests).
 */
#ifdef MRC_HAVE_BPF
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "monitor_bpf.h"
#include "mrc_monitor.skel.h"
#include "vma.h"

const char *mrc_bpf_variant_name(enum mrc_bpf_variant v)
{
	return v == MRC_BPF_VARIANT_ZAP ? "zap (fexit)" : "syscall (tp_btf)";
}

static int libbpf_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[8192];	/* a verifier log comes in one piece */
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	mrc_log(2, "monitor bpf: libbpf: %s", buf);
	return 0;
}

/* Where the zap variant attaches on this kernel. */
struct zap_plan {
	const char *zap_fn;
	int zap[3];		/* vma, start, end */
	int huge[3];		/* -1: no hugetlb hook */
	int free_[3];		/* start, end, walk */
	int move_pmc;		/* move_page_tables(struct pagetable_move_control *) */
	int move[3];		/* vma, old_addr, len */
};

static const struct btf_type *func_proto(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	const struct btf_type *t;

	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, id);
	return t ? btf__type_by_id(btf, t->type) : NULL;
}

/* Position of the first parameter called one of names, or -1. */
static int param(const struct btf *btf, const struct btf_type *proto,
		 const char *a, const char *b)
{
	const struct btf_param *p = btf_params(proto);
	int i;

	for (i = 0; i < btf_vlen(proto); i++) {
		const char *n = btf__name_by_offset(btf, p[i].name_off);

		if (n && (!strcmp(n, a) || (b && !strcmp(n, b))))
			return i;
	}
	return -1;
}

static int find3(const struct btf *btf, const char *fn, const char *a,
		 const char *a2, const char *b, const char *b2, const char *c,
		 int out[3])
{
	const struct btf_type *p = func_proto(btf, fn);

	out[0] = out[1] = out[2] = -1;
	if (!p)
		return -ENOENT;
	out[0] = param(btf, p, a, a2);
	out[1] = param(btf, p, b, b2);
	out[2] = param(btf, p, c, NULL);
	return out[0] < 0 || out[1] < 0 || out[2] < 0 ? -ENOENT : 0;
}

static int plan_zap(struct zap_plan *z)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *mv;
	int err = -ENOENT;

	if (!btf)
		return -ENOTSUP;
	z->zap_fn = "__zap_vma_range";
	if (find3(btf, z->zap_fn, "vma", NULL, "start", "addr", "end", z->zap)) {
		z->zap_fn = "unmap_page_range";
		if (find3(btf, z->zap_fn, "vma", NULL, "addr", "start", "end", z->zap)) {
			mrc_log(1, "monitor bpf: no zap function in BTF");
			goto out;
		}
	}
	find3(btf, "__unmap_hugepage_range", "vma", NULL, "start", NULL, "end", z->huge);
	if (find3(btf, "madvise_free_pte_range", "addr", NULL, "end", NULL, "walk", z->free_)) {
		mrc_log(1, "monitor bpf: no madvise_free_pte_range in BTF");
		goto out;
	}
	mv = func_proto(btf, "move_page_tables");
	if (!mv) {
		mrc_log(1, "monitor bpf: no move_page_tables in BTF");
		goto out;
	}
	z->move_pmc = btf_vlen(mv) == 1;
	if (!z->move_pmc &&
	    find3(btf, "move_page_tables", "vma", NULL, "old_addr", NULL, "len", z->move)) {
		mrc_log(1, "monitor bpf: unknown move_page_tables prototype");
		goto out;
	}
	err = 0;
out:
	btf__free(btf);
	return err;
}

static void autoload(struct mrc_bpf_skel *s, enum mrc_bpf_variant v,
		     const struct zap_plan *z)
{
	int zap = v == MRC_BPF_VARIANT_ZAP;

	bpf_program__set_autoload(s->progs.mrc_zap_exit, zap);
	bpf_program__set_autoload(s->progs.mrc_huge_zap_exit, zap && z->huge[0] >= 0);
	bpf_program__set_autoload(s->progs.mrc_free_exit, zap);
	bpf_program__set_autoload(s->progs.mrc_move_exit_args, zap && !z->move_pmc);
	bpf_program__set_autoload(s->progs.mrc_move_enter_pmc, zap && z->move_pmc);
	bpf_program__set_autoload(s->progs.mrc_move_exit_pmc, zap && z->move_pmc);
	bpf_program__set_autoload(s->progs.mrc_sys_exit, !zap);
	bpf_program__set_autoload(s->progs.mrc_filemap_delete, !zap);
	if (!zap)
		return;
	bpf_program__set_attach_target(s->progs.mrc_zap_exit, 0, z->zap_fn);
	s->rodata->zap_vma_arg = z->zap[0];
	s->rodata->zap_start_arg = z->zap[1];
	s->rodata->zap_end_arg = z->zap[2];
	if (z->huge[0] >= 0) {
		s->rodata->huge_vma_arg = z->huge[0];
		s->rodata->huge_start_arg = z->huge[1];
		s->rodata->huge_end_arg = z->huge[2];
	}
	s->rodata->free_start_arg = z->free_[0];
	s->rodata->free_end_arg = z->free_[1];
	s->rodata->free_walk_arg = z->free_[2];
	if (!z->move_pmc) {
		s->rodata->move_vma_arg = z->move[0];
		s->rodata->move_addr_arg = z->move[1];
		s->rodata->move_len_arg = z->move[2];
	}
}

static void *map_view(struct bpf_map *map, size_t elem, size_t n, int prot)
{
	size_t len = elem * n, pg = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	len = (len + pg - 1) & ~(pg - 1);
	p = mmap(NULL, len, prot, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

static void unmap_views(struct mrc_bpf_mon *m)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
#define VIEW_LEN(e, n) ((((size_t)(e) * (n)) + pg - 1) & ~(pg - 1))
	if (m->words)
		munmap((void *)m->words, VIEW_LEN(sizeof(uint64_t), MRC_BPF_SLOTS));
	if (m->ix.slots)
		munmap(m->ix.slots, VIEW_LEN(sizeof(struct mrc_bpf_slot), MRC_BPF_SLOTS));
	if (m->ix.cells)
		munmap(m->ix.cells, VIEW_LEN(sizeof(struct mrc_bpf_cell), MRC_BPF_CELLS));
#undef VIEW_LEN
	m->words = NULL;
	m->ix.slots = NULL;
	m->ix.cells = NULL;
}

int mrc_bpf_run_watch(struct mrc_bpf_mon *m, struct mrc_bpf_watch_args *a)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = a, .ctx_size_in = sizeof(*a));
	int err = bpf_prog_test_run_opts(m->watch_fd, &opts);

	return err < 0 ? -errno : 0;
}

/* Load and attach variant v; on failure everything is undone. */
static int load_variant(struct mrc_bpf_mon *m, enum mrc_bpf_variant v,
			const struct zap_plan *z)
{
	struct mrc_bpf_watch_args init = {
		.slot = MRC_BPF_EPOCH_SLOT, .init = 1, .word = MRC_WORD(1),
	};
	struct mrc_bpf_skel *s = mrc_bpf_skel__open();
	int err;

	if (!s)
		return -errno ? -errno : -ENOMEM;
	autoload(s, v, z);
	if (mrc_huge_page_default())
		s->rodata->huge_default = mrc_huge_page_default();
	err = mrc_bpf_skel__load(s);
	if (err) {
		mrc_log(1, "monitor bpf: loading the %s programs: %s",
			mrc_bpf_variant_name(v), strerror(-err));
		goto fail;
	}
	m->skel = s;
	m->variant = v;
	m->watch_fd = bpf_program__fd(s->progs.mrc_watch);
	m->ix.ctl = &s->bss->ctl;
	m->words = map_view(s->maps.words, sizeof(uint64_t), MRC_BPF_SLOTS, PROT_READ);
	m->ix.slots = map_view(s->maps.slots, sizeof(struct mrc_bpf_slot),
			       MRC_BPF_SLOTS, PROT_READ | PROT_WRITE);
	m->ix.cells = map_view(s->maps.cells, sizeof(struct mrc_bpf_cell),
			       MRC_BPF_CELLS, PROT_READ | PROT_WRITE);
	if (!m->words || !m->ix.slots || !m->ix.cells) {
		err = -errno;
		mrc_log(0, "monitor bpf: mapping the index: %s", strerror(-err));
		goto fail;
	}
	err = mrc_bpf_run_watch(m, &init);
	if (err) {
		mrc_log(0, "monitor bpf: running mrc_watch: %s", strerror(-err));
		goto fail;
	}
	err = mrc_bpf_skel__attach(s);
	if (err) {
		mrc_log(1, "monitor bpf: attaching the %s programs: %s",
			mrc_bpf_variant_name(v), strerror(-err));
		goto fail;
	}
	return 0;
fail:
	unmap_views(m);
	mrc_bpf_skel__destroy(s);
	m->skel = NULL;
	return err ? err : -EINVAL;
}

int mrc_bpf_load(struct mrc_bpf_mon *m)
{
	const char *force = getenv("MRCACHE_BPF_VARIANT");
	libbpf_print_fn_t old = libbpf_set_print(libbpf_to_log);
	struct zap_plan z;
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		mrc_log(0, "monitor bpf: the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		err = -ENOTSUP;
		goto out;
	}
	memset(&z, 0, sizeof(z));
	err = -ENOENT;
	if (!force || !strcmp(force, "zap"))
		err = plan_zap(&z);
	if (!err)
		err = load_variant(m, MRC_BPF_VARIANT_ZAP, &z);
	if (!err || (force && !strcmp(force, "zap")))
		goto out;
	err = load_variant(m, MRC_BPF_VARIANT_SYSCALL, &z);
	if (err == -EPERM)
		mrc_log(0, "monitor bpf: the kernel refused the programs (EPERM): "
			"loading them needs CAP_BPF and CAP_PERFMON");
	else if (err)
		mrc_log(0, "monitor bpf: cannot load the programs: %s", strerror(-err));
out:
	libbpf_set_print(old);
	if (!err)
		mrc_log(1, "monitor bpf: %s variant attached", mrc_bpf_variant_name(m->variant));
	return err;
}

void mrc_bpf_unload(struct mrc_bpf_mon *m)
{
	unmap_views(m);
	mrc_bpf_skel__destroy(m->skel);
	m->skel = NULL;
}
#endif
