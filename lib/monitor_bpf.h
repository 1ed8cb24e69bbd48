/* SPDX-License-Identifier: MIT */
/*
 * monitor_bpf.h - private to the bpf monitor (lib/monitor_bpf*.c).
 */
#ifndef MRC_MONITOR_BPF_H
#define MRC_MONITOR_BPF_H

#include <pthread.h>
#include <stdint.h>
#include <linux/types.h>
#include "monitor.h"
#include "monitor_bpf_abi.h"

/* The user-side view of the index the programs read (monitor_bpf_index.c).
 * Callers serialise every call on one index. */
struct mrc_bpf_index {
	struct mrc_bpf_ctl *ctl;
	struct mrc_bpf_slot *slots;	/* MRC_BPF_SLOTS */
	struct mrc_bpf_cell *cells;	/* MRC_BPF_CELLS */
};

/* The level a range of `len` bytes lives at; MRC_BPF_LEVELS if too long. */
unsigned mrc_bpf_level(uint64_t len);
/* Publish slots[id] (already filled in) to the programs: 0 or -ENOSPC. */
int mrc_bpf_index_insert(struct mrc_bpf_index *ix, uint32_t id);
/* Withdraw slots[id]; the programs stop finding it. */
void mrc_bpf_index_remove(struct mrc_bpf_index *ix, uint32_t id);

enum mrc_bpf_variant {
	MRC_BPF_VARIANT_ZAP,		/* fexit on the zap/move paths */
	MRC_BPF_VARIANT_SYSCALL,	/* tp_btf sys_exit + page-cache deletion */
};

struct mrc_bpf_skel;
struct ring_buffer;

/* What the library remembers per slot. */
struct mrc_bpf_watch {
	uint64_t cookie;
	uint64_t gen;		/* current generation (word = gen << 1 | 1) */
	uintptr_t start, end;
	int used;
};

struct mrc_bpf_mon {
	struct mrc_monitor base;
	struct mrc_bpf_mon *prev, *next;	/* live monitors, for fork */
	struct mrc_bpf_skel *skel;
	enum mrc_bpf_variant variant;
	struct ring_buffer *rb;
	int watch_fd;			/* the mrc_watch syscall program */
	const uint64_t *words;		/* read-only mapping */
	struct mrc_bpf_index ix;
	/* lock guards ix (the shared index), watches[] and the free list;
	 * never held across mrc_cache_event(). */
	pthread_mutex_t lock;
	struct mrc_bpf_watch *watches;	/* MRC_BPF_SLOTS */
	uint32_t *free_ids;
	uint32_t nfree;
	int reported;			/* events drain() reported */
};

/* monitor_bpf_load.c: open, pick the variant from BTF, load, attach. */
int mrc_bpf_load(struct mrc_bpf_mon *m);
void mrc_bpf_unload(struct mrc_bpf_mon *m);
const char *mrc_bpf_variant_name(enum mrc_bpf_variant v);
/* Run the mrc_watch program: set words[a->slot], find the file range. */
int mrc_bpf_run_watch(struct mrc_bpf_mon *m, struct mrc_bpf_watch_args *a);

/* monitor_bpf.c */
int mrc_bpf_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		  uint64_t cookie, struct mrc_watch *w);
void mrc_bpf_unwatch(struct mrc_monitor *mon, struct mrc_watch *w);

/* monitor_bpf_selftest.c: 0, or -ENOTSUP after logging the failed case. */
int mrc_bpf_selftest(struct mrc_bpf_mon *m);

#endif
