/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/load.c - open the bpf monitor's programs, pick the attach
 * variant from the running kernel's BTF, load and attach them.
 *
 * The zap variant (fexit on the page-table paths) sees every caller and
 * costs nothing on other system calls; some kernels refuse fentry/fexit
 * (EPERM), and function prototypes move between releases, so its argument
 * positions are looked up by name in BTF and any failure falls back to the
 * syscall variant (tp_btf/sys_exit).  MRCACHE_BPF_VARIANT=zap|syscall
 * forces one (tests).
 *
 * libbpf (loaded at run time, lib/monitor/bpf/dl_bpf.h) opens, relocates and loads
 * the programs; then the set keeps duplicates of the descriptors it needs
 * and the bpf_object goes, with all of libbpf's memory.  Attaching,
 * detaching, running mrc_watch and reading the ring are the set's own
 * system calls, so nothing after the load calls into libbpf, and the
 * atfork child handler can close everything without it.
 */
#ifdef MRC_HAVE_BPF
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "monitor/bpf/dl_bpf.h"
#include "monitor/bpf/bpf.h"
#include "mrc_monitor.skel.h"
#include "monitor/vma.h"

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
	int uring_complete;	/* syscall variant: the io_uring_complete tracepoint */
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

static int plan_zap(const struct btf *btf, struct zap_plan *z)
{
	const struct btf_type *mv;

	z->zap_fn = "__zap_vma_range";
	if (find3(btf, z->zap_fn, "vma", NULL, "start", "addr", "end", z->zap)) {
		z->zap_fn = "unmap_page_range";
		if (find3(btf, z->zap_fn, "vma", NULL, "addr", "start", "end", z->zap)) {
			mrc_log(1, "monitor bpf: no zap function in BTF");
			return -ENOENT;
		}
	}
	find3(btf, "__unmap_hugepage_range", "vma", NULL, "start", NULL, "end", z->huge);
	if (find3(btf, "madvise_free_pte_range", "addr", NULL, "end", NULL, "walk", z->free_)) {
		mrc_log(1, "monitor bpf: no madvise_free_pte_range in BTF");
		return -ENOENT;
	}
	mv = func_proto(btf, "move_page_tables");
	if (!mv) {
		mrc_log(1, "monitor bpf: no move_page_tables in BTF");
		return -ENOENT;
	}
	z->move_pmc = btf_vlen(mv) == 1;
	if (!z->move_pmc &&
	    find3(btf, "move_page_tables", "vma", NULL, "old_addr", NULL, "len", z->move)) {
		mrc_log(1, "monitor bpf: unknown move_page_tables prototype");
		return -ENOENT;
	}
	return 0;
}

/* What the running kernel offers, from one read of its BTF: the zap
 * variant's targets when zap is set (-ENOENT when it cannot attach), and
 * whether io_uring's completion tracepoint exists (CONFIG_IO_URING). */
static int plan(struct zap_plan *z, int zap)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int err;

	if (!btf)
		return -ENOTSUP;
	z->uring_complete = btf__find_by_name_kind(btf, "btf_trace_io_uring_complete",
						   BTF_KIND_TYPEDEF) >= 0;
	err = zap ? plan_zap(btf, z) : -ENOENT;
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
	bpf_program__set_autoload(s->progs.mrc_uring_complete, !zap && z->uring_complete);
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

static void *map_view(int fd, size_t len, int prot)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	len = (len + pg - 1) & ~(pg - 1);
	p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

#define VIEW_LEN(e, n) ((((size_t)(e) * (n)) + pg - 1) & ~(pg - 1))

static void unmap_views(struct mrc_bpf_set *s)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (s->words)
		munmap((void *)s->words, VIEW_LEN(sizeof(uint64_t), MRC_BPF_SLOTS));
	if (s->ix.slots)
		munmap(s->ix.slots, VIEW_LEN(sizeof(struct mrc_bpf_slot), MRC_BPF_SLOTS));
	if (s->ix.cells)
		munmap(s->ix.cells, VIEW_LEN(sizeof(struct mrc_bpf_cell), MRC_BPF_CELLS));
	if (s->bss)
		munmap(s->bss, VIEW_LEN(sizeof(struct mrc_bpf_skel__bss), 1));
	mrc_bpf_ring_unmap(&s->ring);
	s->words = NULL;
	s->ix.slots = NULL;
	s->ix.cells = NULL;
	s->bss = NULL;
	s->ix.ctl = NULL;
}

static int map_views(struct mrc_bpf_set *s)
{
	s->words = map_view(s->words_fd, sizeof(uint64_t) * MRC_BPF_SLOTS, PROT_READ);
	s->ix.slots = map_view(s->slots_fd, sizeof(struct mrc_bpf_slot) * MRC_BPF_SLOTS,
			       PROT_READ | PROT_WRITE);
	s->ix.cells = map_view(s->cells_fd, sizeof(struct mrc_bpf_cell) * MRC_BPF_CELLS,
			       PROT_READ | PROT_WRITE);
	s->bss = map_view(s->bss_fd, sizeof(struct mrc_bpf_skel__bss), PROT_READ | PROT_WRITE);
	if (!s->words || !s->ix.slots || !s->ix.cells || !s->bss)
		return -errno;
	s->ix.ctl = &((struct mrc_bpf_skel__bss *)s->bss)->ctl;
	return mrc_bpf_ring_map(&s->ring, s->events_fd, MRC_BPF_RINGBUF);
}

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

int mrc_bpf_run_watch(struct mrc_bpf_set *s, struct mrc_bpf_watch_args *a)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (__u32)s->watch_fd;
	attr.test.ctx_in = (__u64)(uintptr_t)a;
	attr.test.ctx_size_in = sizeof(*a);
	return sys_bpf(BPF_PROG_TEST_RUN, &attr) < 0 ? -errno : 0;
}

/* Tracing programs (fentry, fexit, tp_btf) attach to the target named at
 * load time. */
int mrc_bpf_attach(struct mrc_bpf_set *s)
{
	union bpf_attr attr;

	for (int i = 0; i < s->nprogs; i++) {
		if (s->link_fds[i] >= 0)
			continue;
		memset(&attr, 0, sizeof(attr));
		attr.raw_tracepoint.prog_fd = (__u32)s->prog_fds[i];
		s->link_fds[i] = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &attr);
		if (s->link_fds[i] < 0) {
			int err = -errno;

			mrc_bpf_detach(s);
			return err;
		}
	}
	return 0;
}

void mrc_bpf_detach(struct mrc_bpf_set *s)
{
	for (int i = 0; i < s->nprogs; i++) {
		if (s->link_fds[i] >= 0)
			close(s->link_fds[i]);
		s->link_fds[i] = -1;
	}
}

static int keep_fd(int fd, int *out)
{
	*out = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	return *out < 0 ? -errno : 0;
}

/* Duplicates of the descriptors of what the load made; the skeleton's go
 * with it. */
static int keep_fds(struct mrc_bpf_set *s, struct mrc_bpf_skel *k)
{
	struct bpf_program *progs[] = {
		k->progs.mrc_exit_mmap, k->progs.mrc_zap_exit, k->progs.mrc_huge_zap_exit,
		k->progs.mrc_free_exit, k->progs.mrc_move_exit_args,
		k->progs.mrc_move_enter_pmc, k->progs.mrc_move_exit_pmc,
		k->progs.mrc_sys_exit, k->progs.mrc_filemap_delete, k->progs.mrc_uring_complete,
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]) && !err; i++) {
		int fd = bpf_program__fd(progs[i]);

		if (fd < 0)	/* not loaded: autoload was off */
			continue;
		s->link_fds[s->nprogs] = -1;
		err = keep_fd(fd, &s->prog_fds[s->nprogs++]);
	}
	if (!err)
		err = keep_fd(bpf_program__fd(k->progs.mrc_watch), &s->watch_fd);
	if (!err)
		err = keep_fd(bpf_map__fd(k->maps.words), &s->words_fd);
	if (!err)
		err = keep_fd(bpf_map__fd(k->maps.slots), &s->slots_fd);
	if (!err)
		err = keep_fd(bpf_map__fd(k->maps.cells), &s->cells_fd);
	if (!err)
		err = keep_fd(bpf_map__fd(k->maps.events), &s->events_fd);
	if (!err)
		err = keep_fd(bpf_map__fd(k->maps.bss), &s->bss_fd);
	return err;
}

static void close_fds(struct mrc_bpf_set *s)
{
	int *fds[] = { &s->watch_fd, &s->words_fd, &s->slots_fd, &s->cells_fd,
		       &s->events_fd, &s->bss_fd };

	mrc_bpf_detach(s);
	for (int i = 0; i < s->nprogs; i++)
		if (s->prog_fds[i] >= 0)
			close(s->prog_fds[i]);
	s->nprogs = 0;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

/* Open and load variant v with libbpf, keeping the descriptors. */
static int load_objects(struct mrc_bpf_set *s, enum mrc_bpf_variant v,
			const struct zap_plan *z)
{
	struct mrc_bpf_skel *k = mrc_bpf_skel__open();
	int err;

	if (!k)
		return -errno ? -errno : -ENOMEM;
	autoload(k, v, z);
	if (mrc_huge_page_default())
		k->rodata->huge_default = mrc_huge_page_default();
	err = mrc_bpf_skel__load(k);
	if (err)
		mrc_log(1, "monitor bpf: loading the %s programs: %s",
			mrc_bpf_variant_name(v), strerror(-err));
	else
		err = keep_fds(s, k);
	mrc_bpf_skel__destroy(k);
	return err;
}

/* Load and attach variant v; on failure everything is undone. */
static int load_variant(struct mrc_bpf_set *s, enum mrc_bpf_variant v,
			const struct zap_plan *z)
{
	struct mrc_bpf_watch_args init = {
		.slot = MRC_BPF_EPOCH_SLOT, .init = 1, .word = MRC_WORD(1),
	};
	int err = load_objects(s, v, z);

	if (err)
		goto fail;
	s->variant = v;
	err = map_views(s);
	if (err) {
		mrc_log(0, "monitor bpf: mapping the index: %s", strerror(-err));
		goto fail;
	}
	err = mrc_bpf_run_watch(s, &init);
	if (err) {
		mrc_log(0, "monitor bpf: running mrc_watch: %s", strerror(-err));
		goto fail;
	}
	err = mrc_bpf_attach(s);
	if (err) {
		mrc_log(1, "monitor bpf: attaching the %s programs: %s",
			mrc_bpf_variant_name(v), strerror(-err));
		goto fail;
	}
	return 0;
fail:
	mrc_bpf_unload(s);
	return err ? err : -EINVAL;
}

int mrc_bpf_load(struct mrc_bpf_set *s)
{
	const char *force = getenv("MRCACHE_BPF_VARIANT");
	libbpf_print_fn_t old;
	struct zap_plan z;
	int err;

	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		mrc_log(0, "monitor bpf: the kernel has no BTF (/sys/kernel/btf/vmlinux)");
		return -ENOTSUP;
	}
	err = mrc_libbpf_load();
	if (err)
		return err;
	old = libbpf_set_print(libbpf_to_log);
	memset(&z, 0, sizeof(z));
	err = plan(&z, !force || !strcmp(force, "zap"));
	if (!err)
		err = load_variant(s, MRC_BPF_VARIANT_ZAP, &z);
	if (!err || (force && !strcmp(force, "zap")))
		goto out;
	err = load_variant(s, MRC_BPF_VARIANT_SYSCALL, &z);
	if (err == -EPERM)
		mrc_log(0, "monitor bpf: the kernel refused the programs (EPERM): "
			"loading them needs CAP_BPF and CAP_PERFMON");
	else if (err)
		mrc_log(0, "monitor bpf: cannot load the programs: %s", strerror(-err));
out:
	libbpf_set_print(old);
	if (!err)
		mrc_log(1, "monitor bpf: %s variant attached", mrc_bpf_variant_name(s->variant));
	return err;
}

/* No libbpf here: the atfork child handler calls it too. */
void mrc_bpf_unload(struct mrc_bpf_set *s)
{
	unmap_views(s);
	close_fds(s);
}
#endif
