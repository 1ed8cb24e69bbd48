// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mrc_monitor.bpf.c - the bpf monitor's kernel side.
 *
 * Clears bit 0 of the word of every watched range an operation of the
 * watched process changes, before that operation returns to user space,
 * and queues an event naming the slot.  Index layout and its concurrency
 * rules: lib/monitor/bpf/abi.h.
 *
 * Two attach variants; the library loads one (lib/monitor/bpf/load.c):
 *  - zap: fexit on the functions that take pages out of page tables
 *    (unmap_page_range or __zap_vma_range, __unmap_hugepage_range,
 *    madvise_free_pte_range) and fentry+fexit on move_page_tables.  They
 *    see every path, whoever calls it, filtered on vma->vm_mm.
 *  - syscall: tp_btf/sys_exit decoding the unmapping system calls of the
 *    watched process, and tp_btf/mm_filemap_delete_from_page_cache for
 *    truncation and hole punching of watched file ranges by anyone.
 * Both use tp_btf/exit_mmap for the epoch word.
 *
 * Everything runs after the page tables changed (fexit, sys_exit, after the
 * page-cache deletion), so a registration that races with the operation
 * pins either the old pages and sees the word cleared, or the new pages.
 * sys_exit runs after mmap_lock was released, when another thread may
 * already have mapped the freed address: the syscall variant therefore
 * also clears every range a call maps, before that call returns
 * (fresh_range).  The fexit programs run under mmap_lock.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "monitor/bpf/abi.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* enum mrcache_cause (include/mrcache.h) */
#define CAUSE_UNMAP	1
#define CAUSE_REMAP	2
#define CAUSE_DISCARD	3
#define CAUSE_EXIT	4

#define READ_ONCE(x)	(*(const volatile typeof(x) *)&(x))

#define PAGE_SIZE_	4096ull
#define ROUND_UP(x, a)	(((x) + (a) - 1) & ~((a) - 1))
#define PAGE_UP(x)	ROUND_UP(x, PAGE_SIZE_)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_BPF_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} words SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_BPF_SLOTS);
	__type(key, __u32);
	__type(value, struct mrc_bpf_slot);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_BPF_CELLS);
	__type(key, __u32);
	__type(value, struct mrc_bpf_cell);
} cells SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MRC_BPF_RINGBUF);
} events SEC(".maps");

/* shmat address -> segment size, for shmdt (syscall variant). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} shm_sizes SEC(".maps");

/* move_page_tables(pmc) advances pmc as it goes: the range is taken at
 * entry and invalidated at exit, per thread. */
struct move_range {
	__u64 start, end;
};
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct move_range);
} moves SEC(".maps");

struct mrc_bpf_ctl ctl;

/* Argument positions of the zap-variant functions, found by name in the
 * running kernel's BTF by the library before loading. */
const volatile __u32 zap_vma_arg = 1, zap_start_arg = 2, zap_end_arg = 3;
const volatile __u32 huge_vma_arg = 1, huge_start_arg = 2, huge_end_arg = 3;
const volatile __u32 free_start_arg = 1, free_end_arg = 2, free_walk_arg = 3;
const volatile __u32 move_vma_arg = 0, move_addr_arg = 1, move_len_arg = 4;
/* The kernel's default huge page size (MAP_HUGETLB without a size), from
 * the library. */
const volatile __u64 huge_default = 2ull << 20;

struct walk {
	__u64 space, s, e;
	__u64 b0;
	__u32 k, cause;
};

static __always_inline void bump(__u32 id, __u32 cause)
{
	struct mrc_bpf_event *ev;
	__u64 *w, old;

	w = bpf_map_lookup_elem(&words, &id);
	if (!w)
		return;
	old = __sync_fetch_and_and(w, ~1ull);
	if (!(old & 1))
		return;
	__sync_fetch_and_add(&ctl.stats.bumps, 1);
	ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	if (ev) {
		ev->slot = id;
		ev->cause = cause;
		ev->old_word = old;
		bpf_ringbuf_submit(ev, 0);
	} else {
		ctl.lost = 1;
	}
	ctl.pending = 1;
}

/*
 * check_slot(), walk_level() and invalidate() are global functions: the
 * verifier checks each once on its own instead of again at every call site
 * (as it does static ones), which keeps loading at tens of milliseconds
 * instead of seconds.
 */
__noinline int check_slot(__u32 id, struct walk *w)
{
	struct mrc_bpf_slot *sl = bpf_map_lookup_elem(&slots, &id);

	if (!w || !sl || !sl->end)
		return 0;
	if (w->space == MRC_BPF_SPACE_VA) {
		if (!(sl->start < w->e && w->s < sl->end))
			return 0;
	} else if (sl->fmap != w->space || !(sl->fstart < w->e && w->s < sl->fend)) {
		return 0;
	}
	bump(id, w->cause);
	return 0;
}

static long bucket_cb(__u32 i, void *data)
{
	struct walk *w = data;
	struct mrc_bpf_cell *cell;
	__u32 c, n, j;

	c = mrc_bpf_cell_hash(w->space, w->k, w->b0 + i);
	cell = bpf_map_lookup_elem(&cells, &c);
	if (!cell)
		return 1;
	n = READ_ONCE(cell->n);
	for (j = 0; j < MRC_BPF_CELL_IDS && j < n; j++) {
		__u32 id = READ_ONCE(cell->id[j]);

		if (id)
			check_slot(id, w);
	}
	return 0;
}

static long scan_cb(__u32 i, void *data)
{
	check_slot(i, data);
	return 0;
}

static long overflow_cb(__u32 i, void *data)
{
	__u32 id;

	if (i >= MRC_BPF_OVERFLOW)
		return 1;
	id = READ_ONCE(ctl.overflow[i]);
	if (id)
		check_slot(id, data);
	return 0;
}

/* One level of the index for [s, e): its buckets, or every slot when the
 * operation spans too many of them.  Returns 1 after such a full walk. */
__noinline int walk_level(__u64 space, __u64 s, __u64 e, __u32 cause, __u32 k)
{
	struct walk w = { .space = space, .s = s, .e = e, .cause = cause, .k = k };
	__u32 shift, count;
	__u64 b1;

	if (k >= MRC_BPF_LEVELS)
		return 0;
	count = space == MRC_BPF_SPACE_VA ? ctl.level_count[k] : ctl.flevel_count[k];
	if (!count)
		return 0;
	shift = MRC_BPF_LEVEL_SHIFT(k);
	w.b0 = s >> shift;
	if (w.b0)
		w.b0--;
	b1 = (e - 1) >> shift;
	if (b1 - w.b0 >= MRC_BPF_MAX_BUCKETS) {
		/* A wide operation: cheaper to look at every slot. */
		__sync_fetch_and_add(&ctl.stats.scans, 1);
		bpf_loop(ctl.nslots, scan_cb, &w, 0);
		return 1;
	}
	__sync_fetch_and_add(&ctl.stats.cells, b1 - w.b0 + 1);
	bpf_loop(b1 - w.b0 + 1, bucket_cb, &w, 0);
	return 0;
}

/* Clear the word of every watched range of `space` overlapping [s, e). */
__noinline int invalidate(__u64 space, __u64 s, __u64 e, __u32 cause)
{
	struct walk w = { .space = space, .s = s, .e = e, .cause = cause };
	__u32 k;

	if (e <= s)
		return 0;
	__sync_fetch_and_add(&ctl.stats.calls, 1);
	for (k = 0; k < MRC_BPF_LEVELS; k++)
		if (walk_level(space, s, e, cause, k))
			return 0;
	if (ctl.overflow_n)
		bpf_loop(ctl.overflow_n, overflow_cb, &w, 0);
	return 0;
}

static __always_inline int watched_mm(struct mm_struct *mm)
{
	return ctl.mm && (__u64)mm == ctl.mm;
}

/* ---- epoch: the address space goes away (exit, exec) ---- */

SEC("tp_btf/exit_mmap")
int BPF_PROG(mrc_exit_mmap, struct mm_struct *mm)
{
	if (watched_mm(mm))
		bump(MRC_BPF_EPOCH_SLOT, CAUSE_EXIT);
	return 0;
}

/* ---- zap variant ---- */

static __always_inline __u64 arg(void *ctx, __u32 n)
{
	__u64 v = 0;

	bpf_get_func_arg(ctx, n, &v);
	return v;
}

static __always_inline int vma_watched(__u64 vma)
{
	struct vm_area_struct *v = (void *)vma;

	return watched_mm(BPF_CORE_READ(v, vm_mm));
}

/* A zap of [arg si, arg ei) in the vma at arg vi has just finished. */
static __always_inline void zapped(void *ctx, __u32 vi, __u32 si, __u32 ei)
{
	if (vma_watched(arg(ctx, vi)))
		invalidate(MRC_BPF_SPACE_VA, arg(ctx, si), arg(ctx, ei), CAUSE_UNMAP);
}

SEC("fexit/unmap_page_range")
int mrc_zap_exit(__u64 *ctx)
{
	zapped(ctx, zap_vma_arg, zap_start_arg, zap_end_arg);
	return 0;
}

SEC("fexit/__unmap_hugepage_range")
int mrc_huge_zap_exit(__u64 *ctx)
{
	zapped(ctx, huge_vma_arg, huge_start_arg, huge_end_arg);
	return 0;
}

SEC("fexit/madvise_free_pte_range")
int mrc_free_exit(__u64 *ctx)
{
	struct mm_walk *walk = (void *)arg(ctx, free_walk_arg);

	if (watched_mm(BPF_CORE_READ(walk, mm)))
		invalidate(MRC_BPF_SPACE_VA, arg(ctx, free_start_arg),
			   arg(ctx, free_end_arg), CAUSE_DISCARD);
	return 0;
}

/* move_page_tables(vma, old_addr, new_vma, new_addr, len, ...): 6.1-6.17. */
SEC("fexit/move_page_tables")
int mrc_move_exit_args(__u64 *ctx)
{
	__u64 addr = arg(ctx, move_addr_arg);

	if (vma_watched(arg(ctx, move_vma_arg)))
		invalidate(MRC_BPF_SPACE_VA, addr, addr + arg(ctx, move_len_arg),
			   CAUSE_REMAP);
	return 0;
}

/* move_page_tables(struct pagetable_move_control *pmc): 6.18 on. */
SEC("fentry/move_page_tables")
int mrc_move_enter_pmc(__u64 *ctx)
{
	struct pagetable_move_control *pmc = (void *)arg(ctx, 0);
	struct move_range r;
	__u64 key = bpf_get_current_pid_tgid();

	if (!vma_watched((__u64)BPF_CORE_READ(pmc, old)))
		return 0;
	r.start = BPF_CORE_READ(pmc, old_addr);
	r.end = r.start + BPF_CORE_READ(pmc, len_in);
	bpf_map_update_elem(&moves, &key, &r, BPF_ANY);
	return 0;
}

SEC("fexit/move_page_tables")
int mrc_move_exit_pmc(__u64 *ctx)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct move_range *r = bpf_map_lookup_elem(&moves, &key);

	if (!r)
		return 0;
	invalidate(MRC_BPF_SPACE_VA, r->start, r->end, CAUSE_REMAP);
	bpf_map_delete_elem(&moves, &key);
	return 0;
}

/* ---- syscall variant (x86-64 system call numbers) ---- */

#define NR_mmap			9
#define NR_munmap		11
#define NR_brk			12
#define NR_mremap		25
#define NR_madvise		28
#define NR_shmat		30
#define NR_shmdt		67
#define NR_ftruncate		77
#define NR_remap_file_pages	216
#define NR_fallocate		285

#define MAP_FIXED_		0x10
#define MREMAP_FIXED_		2
#define MREMAP_DONTUNMAP_	4
#define SHM_REMAP_		040000
#define MADV_DONTNEED_		4
#define MADV_FREE_		8
#define MADV_REMOVE_		9
#define MADV_DONTNEED_LOCKED_	24
#define MADV_GUARD_INSTALL_	102

#define FALLOC_FL_PUNCH_HOLE_	0x02
#define FALLOC_FL_COLLAPSE_RANGE_ 0x08
#define FALLOC_FL_ZERO_RANGE_	0x10
#define FALLOC_FL_INSERT_RANGE_	0x20

#define MAP_ANONYMOUS_		0x20
#define MAP_HUGETLB_		0x40000
#define MAP_HUGE_SHIFT_		26
#define MAP_HUGE_MASK_		0x3f
#define VM_HUGETLB_		0x00400000
#define HUGETLBFS_MAGIC_	0x958458f6
#define HUGE_MAX		(1ull << 30)	/* the largest huge page (x86-64) */

/*
 * On hugetlb mappings the kernel rounds the lengths of mmap and mremap up
 * to the huge page: mmap(p, 4096, MAP_FIXED | MAP_HUGETLB) replaces the
 * whole huge page at p.  Every such length is rounded the same way here.
 */

/* The huge page size of a hugetlbfs file (MAP_HUGETLB and SHM_HUGETLB
 * mappings have one too), 0 for any other file. */
static __always_inline __u64 file_huge_size(struct file *file)
{
	struct super_block *sb = BPF_CORE_READ(file, f_inode, i_sb);
	struct hugetlbfs_sb_info *info;

	if (!sb || BPF_CORE_READ(sb, s_magic) != HUGETLBFS_MAGIC_)
		return 0;
	info = BPF_CORE_READ(sb, s_fs_info);
	return PAGE_SIZE_ << (BPF_CORE_READ(info, hstate, order) & 31);
}

static __always_inline struct file *fd_file_of(struct task_struct *task, long fd)
{
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;

	if (fd < 0 || !fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* The page size mmap(flags, fd) rounds its length to, as ksys_mmap_pgoff()
 * does: a file's own, or MAP_HUGETLB's from the flags (0: the default). */
static __always_inline __u64 mmap_page(struct task_struct *task, __u64 flags, long fd)
{
	struct file *f;
	__u64 huge, log;

	if (!(flags & MAP_ANONYMOUS_)) {
		f = fd_file_of(task, fd);
		huge = f ? file_huge_size(f) : 0;
		return huge ? huge : PAGE_SIZE_;
	}
	if (!(flags & MAP_HUGETLB_))
		return PAGE_SIZE_;
	log = (flags >> MAP_HUGE_SHIFT_) & MAP_HUGE_MASK_;
	return log >= 12 && log <= 30 ? 1ull << log : huge_default;
}

static long vma_page_cb(struct task_struct *task, struct vm_area_struct *vma,
			void *data)
{
	__u64 huge = 0;

	if (vma->vm_flags & VM_HUGETLB_)
		huge = file_huge_size(vma->vm_file);
	*(__u64 *)data = huge ? huge : PAGE_SIZE_;
	return 0;
}

/* The page size of the mapping at addr, or 0 when it is not known: the
 * lookup only trylocks mmap_lock, and fails whenever another thread of the
 * process maps or unmaps at the same time.  Every caller must then
 * invalidate the widest range the system call's arguments allow. */
static __always_inline __u64 vma_page(__u64 addr)
{
	__u64 page = 0;

	bpf_find_vma(bpf_get_current_task_btf(), addr, vma_page_cb, &page, 0);
	return page;
}

static __always_inline void inval_len(__u64 addr, __u64 len, __u32 cause)
{
	__u64 end = addr + PAGE_UP(len);

	if (end < addr)
		end = ~0ull;
	invalidate(MRC_BPF_SPACE_VA, addr, end, cause);
}

/*
 * The range a call has just mapped is new at its address, so a watch there
 * is of an older mapping, which another thread unmapped.  That thread's
 * sys_exit runs only after its call released mmap_lock: in between, this
 * thread can map the freed address, return, and get() a registration of
 * the old pages (issue 25 item 2; test-stale-threads, mostly after an
 * mremap move).  Clearing the new range before the mapping call returns
 * keeps "a get of memory I just mapped never returns older pages" for
 * every thread, whenever the unmapping thread's own program runs.
 */
static __always_inline void fresh_range(__u64 addr, __u64 len)
{
	inval_len(addr, len, CAUSE_UNMAP);
}

static long vma_end_cb(struct task_struct *task, struct vm_area_struct *vma,
		       void *data)
{
	*(__u64 *)data = vma->vm_end;
	return 0;
}

/* The advice values that take pages out of the range.  MADV_GUARD_INSTALL
 * (6.13+) zaps them to put guard entries in their place; MADV_GUARD_REMOVE
 * then leaves fresh zero pages, and itself zaps nothing. */
static __always_inline int madvise_discards(__u64 advice)
{
	return advice == MADV_DONTNEED_ || advice == MADV_FREE_ ||
	       advice == MADV_REMOVE_ || advice == MADV_DONTNEED_LOCKED_ ||
	       advice == MADV_GUARD_INSTALL_;
}

/*
 * Truncation zaps the private (copied-on-write) pages of every mapping of
 * the file too, pinned ones included (unmap_mapping_range with even_cows),
 * and those never were in the page cache whose deletions
 * mrc_filemap_delete sees: decode it by the file's identity, its
 * address_space, as the watched file ranges are indexed.  Truncation by
 * path (truncate(2), open with O_TRUNC) and by another process are not
 * decoded; a hole punch leaves private copies alone, but it and the other
 * fallocate modes that drop or move data are decoded all the same.
 */
static __always_inline void file_changed(struct task_struct *task, long fd,
					 __u64 from, __u64 to)
{
	struct file *f = fd_file_of(task, fd);
	__u64 map = f ? (__u64)BPF_CORE_READ(f, f_mapping) : 0;

	if (map && ctl.file_slots)
		invalidate(map, from & ~(PAGE_SIZE_ - 1), to, CAUSE_DISCARD);
}

static __always_inline void do_fallocate(struct task_struct *task, struct pt_regs *regs)
{
	__u64 mode = regs->si, off = regs->dx, len = regs->r10, end = off + len;

	if (mode & (FALLOC_FL_COLLAPSE_RANGE_ | FALLOC_FL_INSERT_RANGE_))
		end = ~0ull;	/* everything after off moves */
	else if (!(mode & (FALLOC_FL_PUNCH_HOLE_ | FALLOC_FL_ZERO_RANGE_)))
		return;
	file_changed(task, regs->di, off, end < off ? ~0ull : PAGE_UP(end));
}

/*
 * The kernel rounds mremap's lengths to the mapping's page size, which
 * vma_page() may not know.  Rounded up to the largest huge page, an old
 * length covers at least what went; rounded up to 4 KiB only, a new length
 * keeps at most what stayed.  A shrink's tail is then [old + the smallest
 * new length, old + the largest old length): never narrower than the real
 * one, whatever the page size (rounding both to 1 GiB made a shrink of a
 * 4 MiB mapping invalidate nothing).
 */
static __always_inline void do_mremap(struct pt_regs *regs, long ret)
{
	int failed = ret < 0 && ret > -4096;
	__u64 old = regs->di, flags = regs->r10, page, olen, omin, nmin, nmax;

	/* The moved (or resized) mapping has the old one's page size. */
	page = vma_page(failed ? old : (__u64)ret);
	olen = ROUND_UP(regs->si, page ? page : HUGE_MAX);
	omin = ROUND_UP(regs->si, page ? page : PAGE_SIZE_);
	nmax = ROUND_UP(regs->dx, page ? page : HUGE_MAX);
	nmin = ROUND_UP(regs->dx, page ? page : PAGE_SIZE_);

	if (flags & MREMAP_FIXED_)
		inval_len(regs->r8, nmax, CAUSE_UNMAP);
	if (failed) {
		/* Failed: nothing moved, but stay on the safe side. */
		inval_len(old, olen, CAUSE_REMAP);
	} else if ((__u64)ret == old && !(flags & MREMAP_DONTUNMAP_)) {
		/* Resized in place: a shrink's tail went, a grow's is new.  With
		 * the page size unknown, both bounds are taken wide. */
		if (nmin < olen)
			inval_len(old + nmin, olen - nmin, CAUSE_REMAP);
		if (omin < nmax)
			fresh_range(old + omin, nmax - omin);
	} else {
		inval_len(old, olen, CAUSE_REMAP);
		fresh_range(ret, nmax);
	}
}

/* MAP_FIXED replaces what was at its address; any mmap that succeeded
 * maps a range that is new there. */
static __always_inline void do_mmap(struct task_struct *task, struct pt_regs *regs, long ret)
{
	__u64 len = ROUND_UP(regs->si, mmap_page(task, regs->r10, regs->r8));

	if (regs->r10 & MAP_FIXED_)
		inval_len(regs->di, len, CAUSE_UNMAP);
	else if (!(ret < 0 && ret > -4096))
		fresh_range(ret, len);
}

/* Above the high-water mark the heap grows into addresses that something
 * else may have held: new there, as for mmap. */
static __always_inline void do_brk(long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 now = task->mm->brk, hwm = ctl.brk_hwm, nb = ret;

	if (nb < hwm)
		invalidate(MRC_BPF_SPACE_VA, PAGE_UP(nb), PAGE_UP(hwm), CAUSE_UNMAP);
	else if (nb > hwm)
		invalidate(MRC_BPF_SPACE_VA, PAGE_UP(hwm), PAGE_UP(nb), CAUSE_UNMAP);
	ctl.brk_hwm = now > nb ? now : nb;
}

/*
 * The attached segment is new at its address, SHM_REMAP or not
 * (fresh_range).  Its size comes from its VMA; when the lookup cannot take
 * mmap_lock, invalidate everything above addr, and forget any size
 * recorded for addr before, so that shmdt takes all above too instead of
 * a stale, smaller size.
 */
static __always_inline void do_shmat(struct pt_regs *regs, long ret)
{
	__u64 addr = ret, end = 0, size;

	if (ret < 0 && ret > -4096)
		return;
	bpf_find_vma(bpf_get_current_task_btf(), addr, vma_end_cb, &end, 0);
	if (end <= addr) {
		invalidate(MRC_BPF_SPACE_VA, addr, ~0ull, CAUSE_UNMAP);
		bpf_map_delete_elem(&shm_sizes, &addr);
		return;
	}
	size = end - addr;
	invalidate(MRC_BPF_SPACE_VA, addr, end, CAUSE_UNMAP);
	bpf_map_update_elem(&shm_sizes, &addr, &size, BPF_ANY);
}

static __always_inline void do_shmdt(struct pt_regs *regs)
{
	__u64 addr = regs->di, *size = bpf_map_lookup_elem(&shm_sizes, &addr);

	if (size) {
		inval_len(addr, *size, CAUSE_UNMAP);
		bpf_map_delete_elem(&shm_sizes, &addr);
	} else {
		/* Attached before we started: size unknown, take all above. */
		invalidate(MRC_BPF_SPACE_VA, addr, ~0ull, CAUSE_UNMAP);
	}
}

SEC("tp_btf/sys_exit")
int BPF_PROG(mrc_sys_exit, struct pt_regs *regs, long ret)
{
	struct task_struct *task = bpf_get_current_task_btf();

	/* The address space, not the thread group: a clone(CLONE_VM) child
	 * unmaps the same memory. */
	if (!watched_mm(task->mm))
		return 0;
	switch (regs->orig_ax) {
	case NR_munmap:
		inval_len(regs->di, regs->si, CAUSE_UNMAP);
		break;
	case NR_madvise:
		if (madvise_discards(regs->dx))
			inval_len(regs->di, regs->si, CAUSE_DISCARD);
		break;
	case NR_mremap:
		do_mremap(regs, ret);
		break;
	case NR_mmap:
		do_mmap(task, regs, ret);
		break;
	case NR_brk:
		do_brk(ret);
		break;
	case NR_shmat:
		do_shmat(regs, ret);
		break;
	case NR_shmdt:
		do_shmdt(regs);
		break;
	case NR_remap_file_pages:
		inval_len(regs->di, regs->si, CAUSE_UNMAP);
		break;
	case NR_ftruncate:
		if (!ret)
			file_changed(task, regs->di, PAGE_UP(regs->si), ~0ull);
		break;
	case NR_fallocate:
		if (!ret)
			do_fallocate(task, regs);
		break;
	}
	return 0;
}

/* Kernels before these fields existed (none we attach to) get 512. */
struct folio___v61 {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

static __always_inline __u64 folio_pages(struct folio *folio)
{
	int head = bpf_core_enum_value(enum pageflags, PG_head);
	__u64 flags = 0;
	__u32 nr = 0;

	/* flags is the first word of every struct page/folio, but its type
	 * changed (unsigned long, then memdesc_flags_t): read it raw. */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1ull << head)))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		nr = BPF_CORE_READ(folio, _nr_pages);
	else if (bpf_core_field_exists(((struct folio___v61 *)folio)->_folio_nr_pages))
		nr = BPF_CORE_READ((struct folio___v61 *)folio, _folio_nr_pages);
	return nr ? nr : 512;
}

extern int LINUX_KERNEL_VERSION __kconfig;

/* Before Linux 6.7 a hugetlb folio's index counted huge pages, not base
 * pages: read as base pages, deleting the second 2 MiB page of a file
 * invalidated [4 KiB, 2 MiB + 4 KiB) (issue 25 item 3). */
static __always_inline int index_in_huge_pages(struct address_space *as)
{
	struct super_block *sb;

	if (LINUX_KERNEL_VERSION >= ((6 << 16) | (7 << 8)))
		return 0;
	sb = BPF_CORE_READ(as, host, i_sb);
	return sb && BPF_CORE_READ(sb, s_magic) == HUGETLBFS_MAGIC_;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(mrc_filemap_delete, struct folio *folio)
{
	struct address_space *as;
	__u64 index, nr;

	if (!ctl.file_slots)
		return 0;
	as = BPF_CORE_READ(folio, mapping);
	index = BPF_CORE_READ(folio, index);
	nr = folio_pages(folio);
	if (index_in_huge_pages(as))
		index *= nr;
	invalidate((__u64)as, index * PAGE_SIZE_, (index + nr) * PAGE_SIZE_, CAUSE_DISCARD);
	return 0;
}

/*
 * io_uring's IORING_OP_FTRUNCATE (Linux 6.9+) truncates in a worker that
 * makes no system call, so mrc_sys_exit never decodes it, and the private
 * copies it zaps were never in the page cache (issue 25 item 4).  Its
 * completion shows it: io_uring_complete runs after the truncation and
 * before the CQE is written, in whichever task posts it.  Not filtered on
 * the mm: a truncation by any process drops this one's private copies.
 * A request with IOSQE_CQE_SKIP_SUCCESS posts nothing and is not seen.
 */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(mrc_uring_complete, void *ring, void *request)
{
	struct io_kiocb *req = request;
	struct io_ftrunc *ft = request;	/* the request's command data */
	__u64 map;

	if (!ctl.file_slots || !bpf_core_enum_value_exists(enum io_uring_op, IORING_OP_FTRUNCATE))
		return 0;
	if (BPF_CORE_READ(req, opcode) != bpf_core_enum_value(enum io_uring_op, IORING_OP_FTRUNCATE) ||
	    BPF_CORE_READ(req, cqe.res))
		return 0;
	map = (__u64)BPF_CORE_READ(ft, file, f_mapping);
	if (map)
		invalidate(map, PAGE_UP((__u64)BPF_CORE_READ(ft, len)), ~0ull, CAUSE_DISCARD);
	return 0;
}

/* ---- the library's entry: set a word, find the file behind a range ---- */

struct vma_info {
	__u64 start, end, fmap, fstart, fend;
};

static long vma_info_cb(struct task_struct *task, struct vm_area_struct *vma,
			void *data)
{
	struct vma_info *vi = data;
	struct file *file = vma->vm_file;
	__u64 end = vi->end < vma->vm_end ? vi->end : vma->vm_end;

	/* Shared and private file mappings: truncation zaps the private
	 * copies too (file_changed). */
	if (vma->vm_start > vi->start || !file)
		return 0;
	vi->fmap = (__u64)file->f_mapping;
	vi->fstart = vma->vm_pgoff * PAGE_SIZE_ + (vi->start - vma->vm_start);
	vi->fend = vi->fstart + (end - vi->start);
	return 0;
}

SEC("syscall")
int mrc_watch(struct mrc_bpf_watch_args *args)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct vma_info vi = { .start = args->start, .end = args->end };
	__u32 slot = args->slot;
	__u64 *w;

	if (args->init) {
		ctl.mm = (__u64)task->mm;
		ctl.brk_hwm = task->mm->brk;
	}
	w = bpf_map_lookup_elem(&words, &slot);
	if (!w)
		return 0;
	args->err = 0;
	args->fmap = 0;
	if (args->end > args->start) {
		args->err = bpf_find_vma(task, args->start, vma_info_cb, &vi, 0);
		args->fmap = vi.fmap;
		args->fstart = vi.fstart;
		args->fend = vi.fend;
	}
	*(volatile __u64 *)w = args->word;
	return 0;
}
