/* SPDX-License-Identifier: MIT */
/*
 * audit.h - libmrc-audit.so, the interposition library behind mrc-audit(1)
 * (docs/audit.md).  Private to tools/mrc-audit/preload/.
 *
 *   verbs.c        the interposed libibverbs calls and the wrapped ops
 *   regs.c         registration records, the lkey table, the SGE check
 *   witness.c      /dev/mrmon: the watches, the words, the event queue;
 *                  or, without it, witness_uffd.c (MRC_AUDIT_WITNESS)
 *   witness_abi.c  the few lines that depend on the module's ABI version
 *   vmcalls.c      libc's unmapping calls, with their stacks
 *   pages.c        the frames a registration pinned, to tell a harmless
 *                  CLEAR (a split) from one that changed the pages
 *   report.c       the text and JSON reports
 *   preload.c      options, the reporter thread, signals, fork, exit
 *
 * One mutex (mra.lock) guards the records, the witness's ioctls and the
 * event queue; the hot path (an SGE check) takes it only when the word it
 * loads says the registration was invalidated.
 */
#ifndef MRA_AUDIT_H
#define MRA_AUDIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <uapi/linux/mrmon.h>

struct ibv_mr;

/* The interposed calls; everything else is hidden (-fvisibility=hidden). */
#define MRA_EXPORT __attribute__((visibility("default")))

#define MRA_STACK	16	/* frames kept per registration and stale use */
#define MRA_STALE_KEEP	32	/* stale uses reported in full; all are counted */
#define MRA_PARTS	4	/* invalidated parts kept exactly, then their hull */

/* What made a registration invalid (MRMON_CAUSE_* are 1..7). */
#define MRA_CAUSE_REGISTERING	100	/* a watch that came back not armed */
#define MRA_CAUSE_LOST		101	/* word clear, event lost (overflow) */

/* The causes a registration met, as bits (mra_reg.causes). */
static inline uint32_t mra_cause_bit(uint32_t cause)
{
	return cause <= MRMON_CAUSE_OVERFLOW ? 1u << cause : 1u << (cause - MRA_CAUSE_REGISTERING + 8);
}

enum mra_how { MRA_REG_MR, MRA_REG_MR_IOVA, MRA_REG_MR_IOVA2, MRA_REREG_MR, MRA_HOW_N };

struct mra_part {
	uintptr_t start, end;
};

/* A call of the program's that can invalidate (vmcalls.c). */
struct mra_vmcall {
	const char *name;
	uintptr_t start, end;
	uint64_t ns;
	int tid;
	int depth;
	void *stack[MRA_STACK];
};

struct mra_reg {
	uint64_t id;			/* the watch's cookie */
	struct ibv_mr *mr;
	uint32_t lkey, rkey;
	uintptr_t va;
	size_t len;
	uint64_t iova;			/* what SGEs address; va for ibv_reg_mr */
	int access;
	enum mra_how how;
	bool live;			/* registered now */
	bool watched;
	uint32_t slot;
	uint64_t expected;
	const uint64_t *word;		/* the witness's word, or mra_word_valid */
	uint64_t reg_ns, dereg_ns;	/* CLOCK_MONOTONIC */
	/* Invalidation, as the events said (under mra.lock). */
	bool invalid;
	uint32_t cause;			/* the most certain one (mra_invalidate) */
	uint32_t causes;		/* every one, mra_cause_bit() */
	uint64_t inval_ns;
	unsigned nparts;
	struct mra_part parts[MRA_PARTS];
	struct mra_vmcall *call;	/* the call that did it, if seen */
	uint64_t stale_uses;
	/* The frames the registration pinned (pages.c), or NULL. */
	uint64_t *pfns;
	size_t npages;
	bool pages_changed;		/* a re-check found other frames */
	int depth;
	void *stack[MRA_STACK];
	struct mra_reg *next;		/* kept list or free list */
};

struct mra_stale {
	uint64_t reg_id;
	const char *op;
	uint32_t lkey;
	uintptr_t va;
	size_t len;
	uint64_t ns;
	const char *pages;		/* a CLEAR's re-check, mra_reg_pages() */
	int depth;
	void *stack[MRA_STACK];
};

/* Counters each thread bumps on the hot path, summed by the report. */
struct mra_tcount {
	uint64_t posts[4];		/* send, recv, srq_recv, wr_set_sge(_list) */
	uint64_t sge_valid, sge_stale, sge_untouched, sge_unknown, sge_inline, sge_empty;
	struct mra_tcount *next;
};

struct mra_opts {
	bool json, fatal, quiet;
	char output[4096];		/* "" is stderr; %p is the pid */
	int signal;			/* report on this signal; 0: none */
};

enum mra_witness_kind { MRA_WITNESS_NONE, MRA_WITNESS_MRMON, MRA_WITNESS_UFFD };

struct mra_witness {
	enum mra_witness_kind kind;
	int fd;				/* -1: no witness; polls readable with events */
	int abi;			/* the module's ABI version */
	char why[320];			/* why there is none, or why not mrmon */
	const struct mrmon_header *header;
	const uint64_t *words;
	uint32_t nslots;
	uint64_t watch_errors, unwatch_errors, events, overflows;
};

struct mra_stats {
	uint64_t regs[MRA_HOW_N], reg_fail, deregs, dereg_fail, dmabuf;
	uint64_t reg_ns, dereg_ns;	/* time in the real calls */
	uint64_t unwatched;		/* registered without a watch */
	uint64_t invalidated;		/* registrations the witness invalidated */
	uint64_t at_risk;		/* invalidated while registered with remote access */
	uint64_t at_risk_ns, at_risk_max_ns;
	uint64_t inval_to_dereg_n, inval_to_dereg_ns, inval_to_dereg_max_ns;
	uint64_t stale_total;
	unsigned nstale;
	struct mra_stale stale[MRA_STALE_KEEP];
	uint64_t kept_dropped;		/* invalidated records not kept (memory) */
	/* CLEARs re-checked against the pinned frames (pages.c). */
	uint64_t baselines, no_baseline;	/* registrations with and without */
	uint64_t rechecks, clear_harmless, clear_changed, recheck_busy;
};

struct mra_state {
	pthread_mutex_t lock;
	bool ready, child;
	struct mra_opts opts;
	struct mra_witness w;
	int pagemap_fd;			/* -1: CLEARs are not re-checked */
	char pages_why[160];		/* why not */
	struct mra_stats st;
	uint64_t next_id;
	struct mra_reg *kept;		/* deregistered and invalidated: reported */
	uint64_t nkept;
	struct mra_reg *free_regs;
	struct mra_tcount *counts;
	uint64_t start_ns;
	char prog[256];
};

extern struct mra_state mra;
extern const uint64_t mra_word_valid;

uint64_t mra_now(void);
void mra_init(void);
struct mra_tcount *mra_tcount(void);

/* regs.c */
struct mra_reg *mra_reg_alloc(void);
void mra_reg_free(struct mra_reg *r);
void mra_reg_watch(struct mra_reg *r);
void mra_reg_publish(struct mra_reg *r);
void mra_reg_discard(struct mra_reg *r);
void mra_reg_unpublish(struct mra_reg *r);
void mra_reg_retire(struct mra_reg *r);
struct mra_reg *mra_reg_find(uint32_t lkey);
struct mra_reg *mra_reg_by_mr(const struct ibv_mr *mr);
void mra_events_drain(void);
void mra_check_slow(struct mra_reg *r, const char *op, uint32_t lkey, uintptr_t va, size_t len);
void mra_live_foreach(void (*fn)(struct mra_reg *r, void *arg), void *arg);

static inline void mra_count(uint64_t *c)
{
	__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

/*
 * The hot path, per SGE: find the registration by lkey, load its word once
 * (acquire), compare.  No system call, no lock unless the word says the
 * range was invalidated.
 */
static inline void mra_check(const char *op, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct mra_tcount *c = mra_tcount();
	struct mra_reg *r;

	if (!length) {
		mra_count(&c->sge_empty);
		return;
	}
	r = mra_reg_find(lkey);
	if (!r) {
		mra_count(&c->sge_unknown);
		return;
	}
	if (__atomic_load_n(r->word, __ATOMIC_ACQUIRE) == r->expected) {
		mra_count(&c->sge_valid);
		return;
	}
	mra_check_slow(r, op, lkey, (uintptr_t)(addr - r->iova + r->va), length);
}

/* witness.c */
int mra_witness_open(void);
int mra_witness_watch(uintptr_t va, size_t len, uint64_t cookie, uint32_t *slot, uint64_t *expected);
void mra_witness_unwatch(uint32_t slot, uint64_t expected);
bool mra_witness_pending(void);
int mra_witness_read(struct mrmon_event *ev, unsigned max);

/* witness_uffd.c: the weaker witness, where /dev/mrmon is absent. */
int mra_uwitness_open(int *fd, char *why, size_t why_len);
const uint64_t *mra_uwitness_words(void);
int mra_uwitness_watch(uintptr_t va, size_t len, uint64_t cookie, uint32_t *slot,
		       uint64_t *expected);
void mra_uwitness_unwatch(uint32_t slot);
bool mra_uwitness_pending(void);
int mra_uwitness_read(struct mrmon_event *ev, unsigned max);

/* witness_abi.c: the lines that change with the module's ABI. */
int mra_abi_handshake(int fd, struct mrmon_handshake *hs);
uint32_t mra_abi_watch_flags(void);
bool mra_abi_armed(const struct mrmon_range *r);
bool mra_abi_unwatch_gone(int err);

/* vmcalls.c */
bool mra_vmcall_find(uintptr_t start, uintptr_t end, uint64_t since, struct mra_vmcall *out);

/* pages.c */
void mra_pages_open(void);
void mra_pages_baseline(struct mra_reg *r);
bool mra_pages_same(const struct mra_reg *r);
void mra_pages_drop(struct mra_reg *r);
bool mra_reg_recheck(struct mra_reg *r);
void mra_reg_settle(struct mra_reg *r);
const char *mra_reg_pages(const struct mra_reg *r);

/* verbs.c */
void mra_verbs_init(void);

/* report.c */
void mra_report(FILE *f, bool json, const char *why);
void mra_report_stale_now(const struct mra_stale *s, const struct mra_reg *r);
const char *mra_cause_name(uint32_t cause);

#endif
