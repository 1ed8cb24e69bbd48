/* SPDX-License-Identifier: MIT */
/*
 * regs.c - the registrations the program made, found by lkey on the hot
 * path and by id (the watch's cookie) when an event arrives.
 *
 * The lkey table is open addressing, read without a lock: a post loads
 * the table pointer, probes, and checks that the record it found still
 * carries that lkey and is live (providers reuse lkeys).  Writers hold
 * mra.lock, fill the key before the record (release), delete by writing a
 * tombstone, and grow by publishing a new table; old tables and records
 * are never returned to malloc, so a reader racing a writer reads stale
 * but valid memory.  A post racing the deregistration of the key it uses
 * is a bug of the program, and may be counted either way.
 *
 * Everything else here runs under mra.lock.
 */
#include <execinfo.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "audit.h"

#define MRA_TOMB	((struct mra_reg *)1)
#define MRA_IDBUCKETS	16384u
#define MRA_KEEP_MAX	4096u

struct mra_kslot {
	uint32_t key;
	struct mra_reg *reg;		/* NULL: never used; MRA_TOMB: deleted */
};

struct mra_ktab {
	uint32_t mask, used;		/* used: live + tombstones */
	struct mra_kslot s[];
};

static struct mra_ktab *mra_ktab;
static uint32_t mra_klive;
static struct mra_reg *mra_ids[MRA_IDBUCKETS];	/* chained by ->next */

/* murmur3's finalizer: every key bit reaches the low bits the mask keeps
 * (rxe's lkeys are index << 8 | key: a plain multiply left the low 8 bits
 * of every hash equal, and probes ran long). */
static uint32_t mra_khash(uint32_t k)
{
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	k *= 0xc2b2ae35u;
	return k ^ (k >> 16);
}

struct mra_reg *mra_reg_find(uint32_t lkey)
{
	const struct mra_ktab *t = __atomic_load_n(&mra_ktab, __ATOMIC_ACQUIRE);
	struct mra_reg *r;

	if (!t)
		return NULL;
	for (uint32_t i = mra_khash(lkey) & t->mask;; i = (i + 1) & t->mask) {
		r = __atomic_load_n(&t->s[i].reg, __ATOMIC_ACQUIRE);
		if (!r)
			return NULL;
		if (r != MRA_TOMB && __atomic_load_n(&t->s[i].key, __ATOMIC_RELAXED) == lkey &&
		    r->lkey == lkey && __atomic_load_n(&r->live, __ATOMIC_RELAXED))
			return r;
	}
}

static void mra_kput(struct mra_ktab *t, struct mra_reg *r)
{
	uint32_t i = mra_khash(r->lkey) & t->mask;

	while (t->s[i].reg && t->s[i].reg != MRA_TOMB)
		i = (i + 1) & t->mask;
	if (!t->s[i].reg)
		t->used++;
	__atomic_store_n(&t->s[i].key, r->lkey, __ATOMIC_RELAXED);
	__atomic_store_n(&t->s[i].reg, r, __ATOMIC_RELEASE);
}

static struct mra_ktab *mra_ktab_new(uint32_t size)
{
	struct mra_ktab *t = calloc(1, sizeof(*t) + size * sizeof(t->s[0]));

	if (t)
		t->mask = size - 1;
	return t;
}

static void mra_kinsert(struct mra_reg *r)
{
	struct mra_ktab *t = mra_ktab, *n;
	uint32_t size = 1024;

	if (!t || (t->used + 1) * 2 > t->mask + 1) {
		while (size < (mra_klive + 1) * 4)
			size *= 2;
		n = mra_ktab_new(size);
		if (!n)
			return;		/* the key stays unknown to the hot path */
		for (uint32_t i = 0; t && i <= t->mask; i++)
			if (t->s[i].reg && t->s[i].reg != MRA_TOMB)
				mra_kput(n, t->s[i].reg);
		__atomic_store_n(&mra_ktab, n, __ATOMIC_RELEASE);
		t = n;		/* the old table is left to its readers */
	}
	mra_kput(t, r);
	mra_klive++;
}

static void mra_kremove(struct mra_reg *r)
{
	struct mra_ktab *t = mra_ktab;

	for (uint32_t i = t ? mra_khash(r->lkey) & t->mask : 0; t && t->s[i].reg; i = (i + 1) & t->mask) {
		if (t->s[i].reg == r) {
			__atomic_store_n(&t->s[i].reg, MRA_TOMB, __ATOMIC_RELEASE);
			mra_klive--;
			return;
		}
	}
}

struct mra_reg *mra_reg_alloc(void)
{
	struct mra_reg *r = mra.free_regs;

	if (r)
		mra.free_regs = r->next;
	else if (!(r = malloc(sizeof(*r))))
		return NULL;
	memset(r, 0, sizeof(*r));
	r->id = ++mra.next_id;
	r->word = &mra_word_valid;
	r->expected = mra_word_valid;
	return r;
}

void mra_reg_free(struct mra_reg *r)
{
	mra_pages_drop(r);
	free(r->call);
	r->next = mra.free_regs;
	mra.free_regs = r;
}

/* The program's call that made the cause, if vmcalls.c saw it. */
static void mra_invalidate_call(struct mra_reg *r, uintptr_t start, uintptr_t end)
{
	struct mra_vmcall c;

	if (!mra_vmcall_find(start, end, r->reg_ns, &c))
		return;
	if (!r->call && !(r->call = malloc(sizeof(*r->call))))
		return;
	*r->call = c;
}

static void mra_invalidate(struct mra_reg *r, uint32_t cause, uintptr_t start, uintptr_t end)
{
	struct mra_part *p;

	if (!r->invalid) {
		r->invalid = true;
		r->cause = cause;
		r->inval_ns = mra_now();
		mra.st.invalidated++;
		mra_invalidate_call(r, start, end);
	} else if (r->cause == MRMON_CAUSE_CLEAR && cause != MRMON_CAUSE_CLEAR) {
		r->cause = cause;	/* a CLEAR may be harmless, the rest is not */
		mra_invalidate_call(r, start, end);
	}
	r->causes |= mra_cause_bit(cause);
	if (r->nparts < MRA_PARTS) {
		r->parts[r->nparts++] = (struct mra_part){ start, end };
		return;
	}
	p = &r->parts[MRA_PARTS - 1];	/* past the limit: the hull */
	if (start < p->start)
		p->start = start;
	if (end > p->end)
		p->end = end;
}

static void mra_invalidate_all(struct mra_reg *r, uint32_t cause)
{
	mra_invalidate(r, cause, r->va & ~4095ul, (r->va + r->len + 4095) & ~4095ul);
}

void mra_reg_watch(struct mra_reg *r)
{
	int rc = mra_witness_watch(r->va, r->len, r->id, &r->slot, &r->expected);

	if (rc < 0) {
		if (mra.w.fd >= 0)
			mra.st.unwatched++;
		r->expected = mra_word_valid;
		return;
	}
	r->watched = true;
	r->word = &mra.w.words[r->slot];
	if (rc == 1)
		mra_invalidate_all(r, MRA_CAUSE_REGISTERING);
	r->next = mra_ids[r->id % MRA_IDBUCKETS];
	mra_ids[r->id % MRA_IDBUCKETS] = r;
}

static struct mra_reg *mra_reg_by_id(uint64_t id)
{
	struct mra_reg *r = mra_ids[id % MRA_IDBUCKETS];

	while (r && r->id != id)
		r = r->next;
	return r;
}

static void mra_id_remove(struct mra_reg *r)
{
	struct mra_reg **pp = &mra_ids[r->id % MRA_IDBUCKETS];

	while (*pp && *pp != r)
		pp = &(*pp)->next;
	if (*pp)
		*pp = r->next;
}

void mra_live_foreach(void (*fn)(struct mra_reg *r, void *arg), void *arg)
{
	for (unsigned b = 0; b < MRA_IDBUCKETS; b++)
		for (struct mra_reg *r = mra_ids[b]; r; r = r->next)
			fn(r, arg);
}

/* The words of watches whose events were lost: invalid, cause unknown. */
static void mra_rescan_one(struct mra_reg *r, void *arg)
{
	if (!r->invalid && __atomic_load_n(r->word, __ATOMIC_ACQUIRE) != r->expected)
		mra_invalidate_all(r, MRA_CAUSE_LOST);
}

void mra_events_drain(void)
{
	struct mrmon_event ev[64];
	struct mra_reg *r;
	int n;

	while ((n = mra_witness_read(ev, 64)) > 0) {
		for (int i = 0; i < n; i++) {
			mra.w.events++;
			if (ev[i].cause == MRMON_CAUSE_OVERFLOW) {
				mra.w.overflows++;
				continue;
			}
			r = mra_reg_by_id(ev[i].cookie);
			/* not an earlier watch of it (mra_reg_recheck) */
			if (r && ev[i].slot == r->slot && ev[i].generation == r->expected >> 1)
				mra_invalidate(r, ev[i].cause, ev[i].start, ev[i].end);
		}
		for (int i = 0; i < n; i++)
			if (ev[i].cause == MRMON_CAUSE_OVERFLOW) {
				mra_live_foreach(mra_rescan_one, NULL);
				break;
			}
	}
}

void mra_reg_publish(struct mra_reg *r)
{
	__atomic_store_n(&r->live, true, __ATOMIC_RELAXED);
	mra_kinsert(r);
}

/* A registration that failed: its watch goes, the record is reused. */
void mra_reg_discard(struct mra_reg *r)
{
	if (r->watched) {
		mra_witness_unwatch(r->slot, r->expected);
		mra_id_remove(r);
		if (r->invalid)
			mra.st.invalidated--;
	}
	mra_reg_free(r);
}

static bool mra_remote(const struct mra_reg *r)
{
	return r->access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
}

/* Before the real deregistration: the hot path stops finding it. */
void mra_reg_unpublish(struct mra_reg *r)
{
	if (!r->live)
		return;
	mra_kremove(r);
	__atomic_store_n(&r->live, false, __ATOMIC_RELAXED);
}

/* Its events, if any: no read() when nothing is queued and its word is
 * intact (the common case); then the words whose events were lost. */
static void mra_reg_catch_up(struct mra_reg *r)
{
	if (mra_witness_pending() || __atomic_load_n(r->word, __ATOMIC_ACQUIRE) != r->expected)
		mra_events_drain();
	if (r->watched)
		mra_rescan_one(r, NULL);
}

/*
 * A registration whose every invalidation was a CLEAR, with the frames it
 * pinned known (pages.c): arm a new watch of the range first, then compare
 * the frames mapped now with the pinned ones.  Armed means no invalidation
 * of the range was in flight, so every earlier one has finished with the
 * page tables, and any later one clears the new word.  Equal frames are
 * the same pages (the pins keep them from being reused): the CLEARs were
 * harmless, and the record goes on, valid, under the new watch.  Other
 * frames: stale for good.  True when it is valid again.  Under mra.lock.
 */
static bool mra_reg_recheck_pinned(struct mra_reg *r)
{
	uint64_t expected;
	uint32_t slot;
	int rc;

	if (!r->invalid || !r->pfns || r->pages_changed ||
	    r->causes != mra_cause_bit(MRMON_CAUSE_CLEAR))
		return false;
	mra.st.rechecks++;
	/* refused while an invalidation of the range is in flight: those end
	 * in microseconds, so a few tries, then stale this time */
	for (int tries = 0;; tries++) {
		rc = mra_witness_watch(r->va, r->len, r->id, &slot, &expected);
		if (rc != 1)
			break;
		mra_witness_unwatch(slot, expected);
		if (tries == 8)
			break;
		sched_yield();
	}
	if (rc) {
		mra.st.recheck_busy++;
		return false;
	}
	if (!mra_pages_same(r)) {
		mra_witness_unwatch(slot, expected);
		r->pages_changed = true;
		mra.st.clear_changed++;
		return false;
	}
	mra_witness_unwatch(r->slot, r->expected);
	r->slot = slot;
	/* a post racing this reads old and new apart: never a match */
	__atomic_store_n(&r->expected, expected, __ATOMIC_RELAXED);
	__atomic_store_n(&r->word, &mra.w.words[slot], __ATOMIC_RELEASE);
	r->invalid = false;
	r->cause = 0;
	r->causes = 0;
	r->nparts = 0;
	free(r->call);
	r->call = NULL;
	mra.st.invalidated--;
	mra.st.clear_harmless++;
	return true;
}

/* A registration in the lkey table is registered: its pins hold. */
bool mra_reg_recheck(struct mra_reg *r)
{
	return r->live && mra_reg_recheck_pinned(r);
}

/* Before the real deregistration, while the pins still hold: settle
 * whether its CLEARs were harmless.  Under mra.lock. */
void mra_reg_settle(struct mra_reg *r)
{
	mra_reg_catch_up(r);
	mra_reg_recheck_pinned(r);
}

/* What a stale use's report says of its pages: for a registration that
 * only met CLEARs, whether the re-check saw them change. */
const char *mra_reg_pages(const struct mra_reg *r)
{
	if (r->causes != mra_cause_bit(MRMON_CAUSE_CLEAR))
		return "n/a";
	if (r->pages_changed)
		return "changed";
	return r->pfns ? "busy" : "unknown";
}

/* Deregistered, or re-registered over another range: close the record. */
void mra_reg_retire(struct mra_reg *r)
{
	uint64_t d;

	mra_reg_unpublish(r);
	mra_reg_catch_up(r);
	mra_pages_drop(r);		/* unpinned now: the frames mean nothing */
	if (r->watched) {
		mra_witness_unwatch(r->slot, r->expected);
		mra_id_remove(r);
	}
	r->dereg_ns = mra_now();
	if (r->invalid) {
		d = r->dereg_ns - r->inval_ns;
		mra.st.inval_to_dereg_n++;
		mra.st.inval_to_dereg_ns += d;
		if (d > mra.st.inval_to_dereg_max_ns)
			mra.st.inval_to_dereg_max_ns = d;
		if (mra_remote(r)) {
			mra.st.at_risk++;
			mra.st.at_risk_ns += d;
			if (d > mra.st.at_risk_max_ns)
				mra.st.at_risk_max_ns = d;
		}
	}
	if ((r->invalid || r->stale_uses) && mra.nkept < MRA_KEEP_MAX) {
		r->next = mra.kept;
		mra.kept = r;
		mra.nkept++;
		return;
	}
	if (r->invalid)
		mra.st.kept_dropped++;
	mra_reg_free(r);
}

static bool mra_overlaps(const struct mra_reg *r, uintptr_t va, size_t len)
{
	for (unsigned i = 0; i < r->nparts; i++)
		if (va < r->parts[i].end && va + len > r->parts[i].start)
			return true;
	return false;
}

/* The word said invalid: read the causes, decide, record. */
void mra_check_slow(struct mra_reg *r, const char *op, uint32_t lkey, uintptr_t va, size_t len)
{
	struct mra_tcount *c = mra_tcount();
	struct mra_stale s;
	bool stale;

	pthread_mutex_lock(&mra.lock);
	mra_events_drain();
	if (!r->live || r->lkey != lkey) {
		pthread_mutex_unlock(&mra.lock);
		mra_count(&c->sge_unknown);
		return;
	}
	mra_rescan_one(r, NULL);
	stale = mra_overlaps(r, va, len);
	if (stale && mra_reg_recheck(r)) {
		pthread_mutex_unlock(&mra.lock);
		mra_count(&c->sge_valid);
		return;
	}
	if (!stale) {
		pthread_mutex_unlock(&mra.lock);
		mra_count(&c->sge_untouched);
		return;
	}
	mra_count(&c->sge_stale);
	r->stale_uses++;
	mra.st.stale_total++;
	s = (struct mra_stale){ .reg_id = r->id, .op = op, .lkey = lkey, .va = va, .len = len,
				.ns = mra_now(), .pages = mra_reg_pages(r) };
	s.depth = backtrace(s.stack, MRA_STACK);
	if (mra.st.nstale < MRA_STALE_KEEP)
		mra.st.stale[mra.st.nstale++] = s;
	if (mra.opts.fatal)
		mra_report_stale_now(&s, r);
	pthread_mutex_unlock(&mra.lock);
	if (mra.opts.fatal)
		raise(SIGTRAP);
}
