/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/abi.h - what the bpf monitor's programs (bpf/mrc_monitor.bpf.c) and the
 * library (the .c files of lib/monitor/bpf/) share: map layouts and constants.  Included
 * by both sides; the BPF side gets __u32/__u64 from vmlinux.h.
 *
 * The index of watched ranges lives in mmapable array maps that the library
 * writes and the programs only read, so watching a range costs no syscall
 * for the index itself:
 *
 *  - slots[id]: the watched range (and, for shared file mappings, the file
 *    range behind it); words[id] is its generation word.  Slot 0 is the
 *    process epoch word.
 *  - cells[]: a hash table of small buckets.  A range of length L lives at
 *    the smallest level k with L <= 2^(12 + 4k), in the one cell of the
 *    level-k bucket holding its start (it may run into the next bucket).
 *    An operation on [s, e) visits, per level in use, the buckets from
 *    (s >> shift) - 1 to (e - 1) >> shift: a handful of cells whatever the
 *    number of watched ranges.  Buckets of file ranges hash the
 *    address_space pointer in.
 *
 * Concurrency: the library mutates the index under its own mutex; a program
 * reads it with no lock, concurrently.  An id already in a cell is never
 * moved (removal writes 0 in place), so a reader sees every watch that
 * existed when it started; a watch added during its walk was added after the
 * page tables changed (the programs run after the change) and so pins what
 * is mapped now.
 */
#ifndef MRC_MONITOR_BPF_ABI_H
#define MRC_MONITOR_BPF_ABI_H

#define MRC_BPF_SLOTS		131072u	/* words and slots; id 0 = epoch */
#define MRC_BPF_CELL_BITS	16u
#define MRC_BPF_CELLS		(1u << MRC_BPF_CELL_BITS)
#define MRC_BPF_CELL_IDS	15u	/* a cell is 64 bytes */
#define MRC_BPF_LEVELS		9u	/* shifts 12, 16, ..., 44 */
#define MRC_BPF_LEVEL_SHIFT(k)	(12u + 4u * (k))
#define MRC_BPF_MAX_LEN		(1ull << MRC_BPF_LEVEL_SHIFT(MRC_BPF_LEVELS - 1))
/* More buckets than this at one level: walk every slot instead. */
#define MRC_BPF_MAX_BUCKETS	16u
#define MRC_BPF_OVERFLOW	256u	/* ids whose cell was full */
#define MRC_BPF_RINGBUF		(256u * 1024u)

#define MRC_BPF_EPOCH_SLOT	0u

/* Space of a range: the process's virtual addresses, or a file. */
#define MRC_BPF_SPACE_VA	0ull

struct mrc_bpf_slot {
	__u64 start, end;	/* virtual range; end == 0: free */
	__u64 fmap;		/* address_space of a file mapping, or 0 */
	__u64 fstart, fend;	/* file byte range behind [start, end) */
	__u32 level, flevel;	/* index levels of the two ranges */
};

struct mrc_bpf_cell {
	__u32 n;		/* ids in use are below n */
	__u32 id[MRC_BPF_CELL_IDS];
};

/* Written by the programs (and the epoch), read by the library. */
struct mrc_bpf_event {
	__u32 slot;
	__u32 cause;		/* enum mrcache_cause */
	__u64 old_word;		/* the word before it was cleared */
};

/* Counters the programs keep (per-cpu free: only for figures and tests). */
struct mrc_bpf_stats {
	__u64 calls;		/* operations of the watched mm examined */
	__u64 cells;		/* cells visited */
	__u64 scans;		/* operations that walked every slot */
	__u64 bumps;		/* words cleared */
};

/* The control block, a global of the BPF object (its .bss map). */
struct mrc_bpf_ctl {
	/* set once, by mrc_watch with init, before attaching */
	__u64 mm;		/* struct mm_struct * of the process */
	/* written by the library under its mutex */
	__u32 nslots;		/* ids in use are below nslots */
	__u32 file_slots;	/* slots with a file range */
	__u32 level_count[MRC_BPF_LEVELS];	/* virtual ranges per level */
	__u32 flevel_count[MRC_BPF_LEVELS];	/* file ranges per level */
	__u32 overflow_n;
	__u32 overflow[MRC_BPF_OVERFLOW];
	/* written by the programs */
	__u32 pending;		/* events queued since the last drain */
	__u32 lost;		/* the ring buffer was full */
	__u64 brk_hwm;		/* highest program break seen */
	struct mrc_bpf_stats stats;
};

/* Argument of the `mrc_watch` syscall program. */
struct mrc_bpf_watch_args {
	__u32 slot;
	__u32 init;		/* 1: record the calling process as the target */
	__u64 word;		/* the value words[slot] takes */
	__u64 start, end;
	/* out: the file range behind the watch (fmap 0: none) */
	__u64 fmap, fstart, fend;
	__s32 err;		/* out: the vma lookup failed (-EBUSY: retry) */
	__u32 pad;
};

/* The cell of level-k bucket b of a space (0: virtual addresses, else an
 * address_space pointer).  Collisions only cost a few extra slot checks.
 * Runs of MRC_BPF_CELL_RUN neighbouring buckets go to neighbouring cells,
 * one page of them (the map's pages are aligned); only the run is hashed.
 * The library's watches and unwatches of neighbouring ranges then touch
 * one page of cells, not one page each: on a virtualised host a random
 * page of the table cost about a microsecond, most of the reclaim of many
 * neighbouring regions (docs/benchmarks.md). */
#define MRC_BPF_CELL_RUN_BITS	6u
#define MRC_BPF_CELL_RUN	(1u << MRC_BPF_CELL_RUN_BITS)

static inline __u32 mrc_bpf_cell_hash(__u64 space, __u32 k, __u64 b)
{
	__u64 h = ((b >> MRC_BPF_CELL_RUN_BITS) ^ (space >> 4) ^ ((__u64)k << 58)) *
		  0x9e3779b97f4a7c15ull;

	/* The product's top bits: they depend on every bit of the key. */
	__u32 run = (__u32)(h >> (64 - MRC_BPF_CELL_BITS + MRC_BPF_CELL_RUN_BITS));

	return run << MRC_BPF_CELL_RUN_BITS | (__u32)(b & (MRC_BPF_CELL_RUN - 1));
}

#endif
