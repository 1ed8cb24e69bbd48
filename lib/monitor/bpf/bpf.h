/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/bpf.h - private to the bpf monitor (the .c files of lib/monitor/bpf/).
 *
 * One program set per process (struct mrc_bpf_set): the programs, their
 * maps, the index and the event ring are shared by every cache that uses
 * the monitor; each cache has a struct mrc_bpf_mon, which owns the slots
 * it watches and a queue of the events that name them.
 */
#ifndef MRC_MONITOR_BPF_H
#define MRC_MONITOR_BPF_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include "monitor/monitor.h"
#include "monitor/bpf/abi.h"

/* The user-side view of the index the programs read (monitor/bpf/index.c).
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

/* The consumer side of a BPF ring buffer map (monitor/bpf/ring.c). */
struct mrc_bpf_ring {
	unsigned long *consumer_pos;	/* ours to write */
	const unsigned long *producer_pos;
	const unsigned char *data;	/* mapped twice, so records never wrap */
	size_t size;			/* a power of two */
};

int mrc_bpf_ring_map(struct mrc_bpf_ring *r, int map_fd, size_t size);
void mrc_bpf_ring_unmap(struct mrc_bpf_ring *r);
/* Hand each record to fn in order; returns how many. */
int mrc_bpf_ring_consume(struct mrc_bpf_ring *r,
			 void (*fn)(void *arg, const void *data, size_t len), void *arg);

/* Whether the kernel can preempt the programs, and so skip them
 * (monitor/bpf/preempt.c): 1 (logged) or 0.  decide() is its pure part:
 * the reason, or NULL. */
int mrc_bpf_preemptible(void);
const char *mrc_bpf_preempt_decide(const char *uname_version, const char *realtime,
				   const char *sched_preempt, const char *cmdline);

enum mrc_bpf_variant {
	MRC_BPF_VARIANT_ZAP,		/* fexit on the zap/move paths */
	MRC_BPF_VARIANT_SYSCALL,	/* tp_btf sys_exit + page-cache deletion */
};

#define MRC_BPF_MAX_PROGS 16

/* What the library remembers per slot. */
struct mrc_bpf_watch {
	struct mrc_bpf_mon *owner;
	uint64_t cookie;
	uint64_t gen;		/* current generation (word = gen << 1 | 1) */
	uintptr_t start, end;
	int used;
};

/* Events drained by another cache, waiting for their owner's drain(). */
#define MRC_BPF_QUEUE 16384u	/* more than the ring holds */

struct mrc_bpf_mon {
	struct mrc_monitor base;
	struct mrc_bpf_set *set;
	const struct mrc_bpf_ctl *ctl;		/* set->ix.ctl, for pending() */
	struct mrc_bpf_mon *prev, *next;	/* the set's monitors */
	/* Under set->lock: */
	struct mrc_bpf_event *queue;		/* MRC_BPF_QUEUE */
	uint32_t qhead, qcount;
	int epoch, lost;			/* report every watch; rescan */
	int queued;	/* atomic: any of the three above (pending()) */
	int reported;	/* events the running drain() reported */
};

/* The programs, maps and index of this process (monitor/bpf/set.c). */
struct mrc_bpf_set {
	int refs;			/* caches using it, under the global lock */
	enum mrc_bpf_variant variant;
	/* Descriptors the set holds (libbpf is done with them after load). */
	int prog_fds[MRC_BPF_MAX_PROGS];	/* the programs to attach */
	int link_fds[MRC_BPF_MAX_PROGS];	/* -1: detached */
	int nprogs;
	int watch_fd;			/* the mrc_watch syscall program */
	int words_fd, slots_fd, cells_fd, events_fd, bss_fd;
	/* Mappings of the maps. */
	const uint64_t *words;
	struct mrc_bpf_ctl *bss;	/* the .bss map: ctl */
	struct mrc_bpf_index ix;
	struct mrc_bpf_ring ring;
	/* ring_lock: one consumer of the ring at a time; taken before lock. */
	pthread_mutex_t ring_lock;
	/* lock guards ix, watches[], the free list, the monitor list and
	 * every monitor's queue; never held across mrc_cache_event(). */
	pthread_mutex_t lock;
	struct mrc_bpf_watch *watches;	/* MRC_BPF_SLOTS */
	uint32_t *free_ids;
	uint32_t nfree;
	struct mrc_bpf_mon mons;	/* list head */
};

/* monitor/bpf/set.c: the process's set, loaded by the first get. */
int mrc_bpf_set_get(struct mrc_bpf_set **out);
void mrc_bpf_set_put(struct mrc_bpf_set *set);
/* Anonymous memory straight from mmap: large arrays never go through
 * malloc, whose mmap threshold rises when such a block is freed. */
void *mrc_bpf_pages_alloc(size_t len);
void mrc_bpf_pages_free(void *p, size_t len);

/* monitor/bpf/load.c: pick the variant from BTF, load, keep the
 * descriptors; attach and detach them. */
int mrc_bpf_load(struct mrc_bpf_set *s);
void mrc_bpf_unload(struct mrc_bpf_set *s);
int mrc_bpf_attach(struct mrc_bpf_set *s);
void mrc_bpf_detach(struct mrc_bpf_set *s);
const char *mrc_bpf_variant_name(enum mrc_bpf_variant v);
/* Run the mrc_watch program: set words[a->slot], find the file range. */
int mrc_bpf_run_watch(struct mrc_bpf_set *s, struct mrc_bpf_watch_args *a);

/* monitor/bpf/bpf.c */
int mrc_bpf_watch(struct mrc_monitor *mon, uintptr_t start, uintptr_t end,
		  uint64_t cookie, struct mrc_watch *w);
void mrc_bpf_unwatch(struct mrc_monitor *mon, struct mrc_watch *w);
/* Read the ring: each event goes to its owner's queue. */
void mrc_bpf_route(struct mrc_bpf_set *s);

/* monitor/bpf/selftest.c: 0, or -ENOTSUP after logging the failed case. */
int mrc_bpf_selftest(struct mrc_bpf_mon *m);

#endif
