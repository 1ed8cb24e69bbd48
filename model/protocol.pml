/* SPDX-License-Identifier: MIT */
/*
 * protocol.pml - the invalidation protocol between the mrmon kernel module
 * (kmod/), the Linux interval notifier it uses (mm/mmu_notifier.c), the
 * cache (lib/cache/cache.c, lib/cache/invalidate.c, lib/monitor/kernel.c) and
 * the application, as a Promela model for Spin.  docs/protocol.md explains
 * it; model/verify.sh checks it (make check-model).
 *
 * The model is the code.  Every step names the code it stands for, in a
 * comment of its own, in one of two forms:
 *   @code FILE:FUNCTION:FIRST-LAST   lines FIRST..LAST of FUNCTION in FILE,
 *                                    in this tree; model/coderefs.sh (in
 *                                    make check-model) fails when the file
 *                                    or the function is gone or the lines
 *                                    are no longer inside the function
 *   @linux FILE:FUNCTION             the Linux kernel (6.1), not in this tree
 * A commit that changes a step in the code changes this file with it.
 *
 * Abstractions (docs/protocol.md, "The model"):
 *  - One address range.  Every watch and every region covers it, so every
 *    invalidation reaches every inserted notifier, and a hit's range and
 *    access check (region_covers) always passes.
 *  - "Pages" are the version of the mapping at that address: what a
 *    registration pins, what a snapshot fingerprints (equal fingerprints
 *    are equal versions: the keyed siphash of the PFNs is taken to have no
 *    collisions).  The unmapping thread changes the range NUNMAP times,
 *    each an UNMAP (munmap, MAP_FIXED over it: other pages) or a CLEAR,
 *    which is a harmless split (a VMA or huge-page split: the same pages)
 *    or a real change (MADV_DONTNEED, COW, collapse: other pages).  A CLEAR
 *    that changes the pages maps new ones or, unless NO_ABA, the first
 *    ones again: PFNs do come back (a page-cache page faulted in again
 *    after its private COW copy was zapped).
 *  - One invalidation at a time (one unmapping thread).  The interval
 *    notifier follows mm/mmu_notifier.c: while invalidate_seq is odd the
 *    tree is frozen (inserts and removes are deferred to
 *    invalidate_range_end, and a remove waits for it), the callback sets
 *    the sub's seq (mmu_interval_set_seq), read_begin sleeps while the
 *    invalidation that set it, or that the sub was inserted during, runs.
 *    The seq numbers are abstracted, exactly, to what their comparisons
 *    decide (a sub has one reader at a time: WATCH and REVALIDATE hold
 *    ctx->mutex): sinv[] (read_begin would sleep), scoll[] (read_retry,
 *    and the snapshot's check_retry, would be true).
 *  - folio_maybe_dma_pinned() is taken as exact: a page is pinned when a
 *    registration pins it (the real test can also say yes for a page with
 *    many references; that matters only to a caller that skips the
 *    re-check, see MUTANT_NO_RECHECK).
 *  - A ctx->lock section, a library atomic read-modify-write, a read of
 *    the event ring, are one step each; every other shared access is a
 *    step of its own, under sequential consistency (the code's
 *    acquire/release pairs are what make that assumption hold).  A few
 *    consecutive steps of one thread are merged where no other process can
 *    tell (each place says why).  ctx->mutex is implied: only the cache
 *    uses the descriptor, always under cache->lock.  mmap_lock is left
 *    out: the snapshot's lockless walk does not take it, and a CLEAR may
 *    hold it.  The snapshot's read of the pages and its collision check
 *    are one step; the caller's read_retry under ctx->lock is a later
 *    one.
 *  - Only the kernel monitor: the user-side monitors (uffd, hooks) and the
 *    bpf monitor are not modelled.  WATCH always asks for a snapshot, as
 *    the library does when the module offers REVALIDATE.
 *
 * Properties:
 *   GET_RETURNS   a get never returns a registration whose pages are not
 *                 the ones mapped at its deciding read
 *   HELD          a region is never reclaimed (deregistered) while a thread
 *                 holds it, by reference or by hazard slot; a get that
 *                 returns finds its region not reclaimed
 *   W             (the library) a word that holds its region's expected
 *                 value means the registration pins the mapped pages;
 *                 checked at every page change
 *   K             (the ABI) a valid word of a watch that WATCH returned
 *                 means the pages mapped are the ones WATCH returned with
 *                 (re-armed: the ones WATCH fingerprinted); checked at
 *                 every page change and at every re-arm
 *   end state     no leak: every region free or cached validly, every slot
 *                 owned by one region with its notifier in the tree; no
 *                 deadlock (every process reaches its end)
 *   ltl reclaimed every registration that pins pages no longer mapped is
 *                 eventually deregistered
 *
 * Variants, built by model/verify.sh with -D<name>:
 *  must fail
 *   MUTANT_REG_BEFORE_WATCH     register, then watch (libfabric's order)
 *   MUTANT_DEFERRED_INVALIDATE  the word is cleared by a worker, possibly
 *                               after munmap returned (kdreg2, Dec 2025)
 *   MUTANT_EARLY_WORD_CHECK     the hit reads the word before the lookup's
 *                               reference that it guards
 *   MUTANT_WATCH_NO_WAIT        WATCH returns during an invalidation in
 *                               progress (no wait in read_begin)
 *   MUTANT_OVERFLOW_LOST        an event-queue overflow is dropped, with
 *                               no rescan: a leak, caught by the liveness
 *                               property and by the end-state check
 *   MUTANT_SAME_GENERATION      a reused slot keeps its generation: fails
 *                               with EARLY_UNWATCH; harmless as built
 *   MUTANT_UNWATCH_REMOVE_FIRST UNWATCH removes the notifier, then clears
 *                               the word (mrmon before issue 13): breaks K
 *   MUTANT_REVALIDATE_NO_RETRY  REVALIDATE re-arms without the
 *                               read_begin/read_retry collision check
 *   MUTANT_REVALIDATE_NO_FINGERPRINT  ... without comparing fingerprints
 *   MUTANT_NO_RECHECK           no re-check of the word after registering:
 *                               with REVALIDATE and pages that come back,
 *                               a hit gets pages no longer mapped
 *   MUTANT_RECLAIM_MISSES_SLOT  reclaim does not look at the hazard slots:
 *                               a region a hit holds is deregistered
 *   MUTANT_SLOT_AFTER_CHECK     a hit checks the region, then publishes it
 *                               in its slot: reclaim in between is missed
 *  tolerated (must pass; docs/protocol.md says why)
 *   MUTANT_SAME_GENERATION      alone (a slot is freed only at reclaim)
 *   MUTANT_NO_RECHECK           with NO_ABA (pages never come back)
 *   MUTANT_UNWATCH_REMOVE_FIRST with NO_KERNEL_CHECK: the library never
 *                               reads a word it is unwatching
 *  other switches
 *   EARLY_UNWATCH               a design variant: region_kill() unwatches a
 *                               held region at once; safe only with a new
 *                               generation per watch
 *   NO_ABA                      a change never maps earlier pages again
 *   NO_KERNEL_CHECK             leave K out: check the library's properties
 */

/* ---- bounds: docs/protocol.md, "The model", Bounds ---- */
#ifndef NT
#define NT	2	/* application threads */
#endif
#ifndef NGET0
#define NGET0	2	/* mrcache_get/mrcache_put pairs by thread 0 */
#endif
#ifndef NGET1
#define NGET1	1	/* ... by every other application thread */
#endif
#ifndef NUNMAP
#define NUNMAP	2	/* changes of the range by the unmapping thread */
#endif
#define NREG	3	/* region structs in the type-stable slab */
#define NSLOT	2	/* mrmon slots */
#define QLEN	1	/* mrmon event ring: one entry, so it overflows */

#define NONE	255
#define VALID	1			/* MRMON_WORD_VALID, MRC_WORD_VALID */
#define WORD(g)	(((g) << 1) | VALID)	/* mrmon_word_of(gen) */

/* The invalidation in progress: UNMAP or CLEAR, chosen at the first
 * callback that needs to know (and what a CLEAR does to the pages, at the
 * page change): fewer states, the same behaviours. */
#define EV_ANY		0	/* not chosen yet */
#define EV_UNMAP	1	/* MMU_NOTIFY_UNMAP: w->changed */
#define EV_CLEAR	2	/* MMU_NOTIFY_CLEAR */

/* subscriptions->active_invalidate_ranges, and invalidate_seq & 1 */
#define INV_IDLE	0	/* none in progress; seq even */
#define INV_EVEN	1	/* one in progress whose walk found no interval */
#define INV_ODD		2	/* one in progress, seq odd: the tree is frozen */

/* An interval notifier (struct mmu_interval_notifier). */
#define ITV_NONE	0	/* not inserted (or removed) */
#define ITV_TREE	1	/* in the interval tree: invalidations call it */
#define ITV_DEFER_INS	2	/* inserted while frozen: in the tree at inv_end */
#define ITV_DEFER_RM	3	/* removed while frozen: still called until inv_end */

/* refstate's flags (lib/cache/region.h); the count is refs[]. */
#define R_FREE		0	/* DEAD|RECLAIMED: in the free list */
#define R_PENDING	1	/* PENDING: being registered by a miss */
#define R_LIVE		2	/* no flag: in the index, handed out */
#define R_DEAD		3	/* DEAD: out of the index for good */

/* ---- the address space: struct mm_struct and its notifier subscriptions ---- */
byte mapped = 1;	/* version of the pages mapped at the address */
byte nver = 1;		/* newest version so far */
byte inv;		/* INV_* */
byte itv[NSLOT];	/* ITV_*: each slot's watch's notifier */
bit sinv[NSLOT];	/* the sub's seq is the odd invalidate_seq: read_begin sleeps */
bit scoll[NSLOT];	/* set_seq since read_begin: read_retry is true */

/* ---- kmod: struct mrmon_ctx, struct mrmon_watch (ctx->lock) ---- */
byte word[NSLOT];	/* ctx->words[]: gen << 1 | valid */
byte wgen[NSLOT];	/* w->gen */
byte next_gen;		/* ctx->next_gen */
bit wused[NSLOT];	/* ctx->slot_watch[slot] != NULL */
byte wcookie[NSLOT];	/* w->cookie: the region */
bit wchanged[NSLOT];	/* w->changed: saw an event other than CLEAR */
bit wsnap[NSLOT];	/* w->has_snapshot */
byte wfp[NSLOT];	/* w->fingerprint: the pages WATCH's snapshot saw */
byte qcookie[QLEN];	/* ctx->ring[]: cookie, slot, generation, cause */
byte qslot[QLEN];
byte qgen[QLEN];
bit qclr[QLEN];		/* cause is MRMON_CAUSE_CLEAR */
byte qlen;		/* ctx->ring_count */
bit overflow;		/* ctx->overflow_unreported */
#ifdef MUTANT_DEFERRED_INVALIDATE
byte deferred;		/* slots whose word a work item still has to clear */
#endif
/* Ghosts for K: the pages a valid word vouches for. */
bit karmed[NSLOT];	/* WATCH (or a re-arm) returned the word */
byte kpages[NSLOT];

/* ---- lib: struct mrcache, struct mrcache_region, struct kernel_monitor ---- */
byte lock = NONE;	/* cache->lock: the owner's thread number */
byte index = NONE;	/* the index entry covering the address */
byte rstate[NREG];	/* refstate flags */
byte refs[NREG];	/* refstate count */
byte rpages[NREG];	/* what region->reg pins; 0: not registered */
byte rslot[NREG];	/* region->watch.token; NONE: not watched */
byte rexp[NREG];	/* region->watch.expected */
byte kgens[NSLOT];	/* kernel_monitor->slots[].gen: our live watch's */
/* Hazard slots (lib/cache/threads.h): one per application thread (a
 * thread here holds one region at a time), the region its hit published;
 * NONE when clear. */
byte hslot[NT];
#define HELD_BY_SLOT(r)	(hslot[0] == (r) || hslot[NT - 1] == (r))
/* Ghost for HELD: the region each thread holds, from its get's return to
 * its put. */
byte gheld[NT];
#define GHELD(r)	(gheld[0] == (r) || gheld[NT - 1] == (r))
#ifdef EARLY_UNWATCH
bit runw[NREG];		/* a design variant: unwatched at kill, still held */
#define WATCHED(r)	(rslot[r] != NONE && !runw[r])
#else
#define WATCHED(r)	(rslot[r] != NONE)
#endif
/* kernel_monitor->slots[s].w: the region whose watch is in slot s. */
#define OWNER(s)	((rslot[0] == (s) && WATCHED(0)) -> 0 : \
			 ((rslot[1] == (s) && WATCHED(1)) -> 1 : 2))

byte done;		/* threads that finished (applications, unmapper) */
#ifdef MUTANT_DEFERRED_INVALIDATE
#define NDONE	(NT + 2)
#else
#define NDONE	(NT + 1)
#endif

/* A registration that pins pages no longer mapped. */
#define stale(r)	(rpages[r] != 0 && rpages[r] != mapped)
/* folio_maybe_dma_pinned() of the mapped pages. */
#define PINNED		(rpages[0] == mapped || rpages[1] == mapped || rpages[2] == mapped)

/*
 * The property of a get, evaluated in the same atomic step as the get's
 * deciding read (the read of the word; see try_hit).  An unmap after that
 * step is an unmap after the get decided: the region stays pinned until
 * put and is never handed out again.
 */
#define GET_RETURNS(r)	assert(rpages[r] == mapped)

/* W: a word that holds a registered region's expected value means the
 * registration pins the mapped pages. */
inline check_library()
{
	assert(!(rpages[0] != 0 && WATCHED(0) && word[rslot[0]] == rexp[0] && rpages[0] != mapped));
	assert(!(rpages[1] != 0 && WATCHED(1) && word[rslot[1]] == rexp[1] && rpages[1] != mapped));
	assert(!(rpages[2] != 0 && WATCHED(2) && word[rslot[2]] == rexp[2] && rpages[2] != mapped))
}

/* K: a valid word that WATCH (or a re-arm) returned vouches for the pages
 * mapped: the ABI's promise, whoever reads the word. */
inline check_kernel()
{
#ifndef NO_KERNEL_CHECK
	assert(!(karmed[0] && word[0] == WORD(wgen[0]) && kpages[0] != mapped));
	assert(!(karmed[1] && word[1] == WORD(wgen[1]) && kpages[1] != mapped))
#else
	skip
#endif
}

/* ============ the Linux interval notifier: mm/mmu_notifier.c ============ */

/* mmu_interval_read_begin(): take the sub's seq; if the invalidation that
 * set it (or that the sub was inserted during) still runs, sleep until it
 * ends. */
inline read_begin(s, wait)
{
	/* @linux mm/mmu_notifier.c:mmu_interval_read_begin */
	atomic { scoll[s] = 0; wait = sinv[s] };
#ifndef MUTANT_WATCH_NO_WAIT
	if
	:: wait -> !sinv[s]
	:: else
	fi;
#endif
	wait = 0
}

/* mmu_interval_notifier_remove(): while the tree is frozen the removal is
 * deferred to invalidate_range_end (a callback may still run until then);
 * the caller waits for it (itv_removed). */
inline itv_remove(s)
{
	/* @linux mm/mmu_notifier.c:mmu_interval_notifier_remove */
	atomic {
		assert(itv[s] == ITV_TREE);
		if
		:: inv == INV_ODD -> itv[s] = ITV_DEFER_RM
		:: else -> itv[s] = ITV_NONE
		fi
	}
}

/* ====================== kernel: kmod/ ====================== */

/* mrmon_word_clear_locked(), under ctx->lock: if the word still holds this
 * watch, clear it and push {cookie, slot, gen, cause} (mrmon_event_push: a
 * full ring sets overflow_unreported instead). */
inline mrmon_word_clear_locked(s, clr)
{
	/* @code kmod/mrmon_notify.c:mrmon_word_clear_locked:100-113 */
	/* @code kmod/mrmon_notify.c:mrmon_event_push:79-89 */
	if
	:: word[s] == WORD(wgen[s]) ->
		word[s] = word[s] & ~VALID;
		kpages[s] = 0;		/* ghosts: it vouches for nothing now */
		karmed[s] = 0;
		if
		:: qlen < QLEN ->
			qcookie[qlen] = wcookie[s];
			qslot[qlen] = s;
			qgen[qlen] = wgen[s];
			qclr[qlen] = clr;
			qlen++
		:: else -> overflow = 1
		fi
	:: else
	fi
}

/* mrmon_invalidate(), the callback, in the invalidating thread's
 * invalidate_range_start, under ctx->lock: set the sub's seq (every
 * event), note a cause REVALIDATE cannot undo, clear the word. */
inline mrmon_invalidate(s, kind)
{
	/* @code kmod/mrmon_notify.c:mrmon_invalidate:137-148 */
	atomic {
		assert(wused[s]);
		if
		:: kind == EV_ANY -> kind = EV_UNMAP
		:: kind == EV_ANY -> kind = EV_CLEAR
		:: else
		fi;
		sinv[s] = 1;			/* mmu_interval_set_seq() */
		scoll[s] = 1;
		if
		:: kind == EV_UNMAP -> wchanged[s] = 1
		:: else
		fi;
#ifndef MUTANT_DEFERRED_INVALIDATE
		mrmon_word_clear_locked(s, kind == EV_CLEAR)
#else
		/* ctx->lock busy: a work item clears it later, or now */
		if
		:: mrmon_word_clear_locked(s, kind == EV_CLEAR)
		:: deferred = deferred | (1 << s)
		fi
#endif
	}
}

/* mrmon_snapshot() -> get_user_pages_fast_only(), chunk by chunk: -EBUSY
 * if the sub's seq moved since read_begin (mmu_interval_check_retry),
 * -ENOENT if REVALIDATE's snapshot finds a page not pinned for DMA, else
 * the PFNs, hashed.  bad: the snapshot failed. */
inline mrmon_snapshot(s, pinned, fp, bad)
{
	/* @code kmod/mrmon_snapshot.c:mrmon_snapshot:119-129 */
	/* @code kmod/mrmon_snapshot.c:mrmon_snapshot_chunk:77-90 */
	/* @linux mm/gup.c:get_user_pages_fast_only */
	atomic { bad = (scoll[s] || (pinned && !PINNED)); fp = mapped }
}

/* mrmon_watch_one(): a free slot and a zeroed watch, a new generation and
 * the valid word (under ctx->lock), mmu_interval_notifier_insert(),
 * mmu_interval_read_begin(), the snapshot (MRMON_RANGE_SNAPSHOT), kept
 * only if !read_retry; returns {slot, expected}. */
inline mrmon_watch_one(r, s, e, fp, bad)
{
	/* The watch, its word and the insert are one step: until the insert
	 * nothing can reach the new watch (no callback, and no region holds
	 * the free slot; region_alloc's PENDING is folded in too: a stale
	 * reader backs off a FREE region as it does a PENDING one).  The
	 * insert: while the tree is frozen the sub joins it at the
	 * invalidation's end; if the walk found nothing it joins at once and
	 * the seq goes odd; either way this invalidation does not call it,
	 * and read_begin will wait for its end. */
	/* @code lib/cache/cache.c:region_alloc:143-150 */
	/* @code kmod/mrmon_watch.c:mrmon_watch_one:196-206 */
	/* @code kmod/mrmon_watch.c:mrmon_watch_alloc:129-131 */
	/* @linux mm/mmu_notifier.c:__mmu_interval_notifier_insert */
	atomic {
		rstate[r] = R_PENDING;
		/* The code pops the slot freed last (a stack, mrmon_watch_alloc);
		 * the model takes the lowest free slot.  Both reuse a just-freed
		 * slot at once whenever it is the only free one, the case the
		 * generation exists for; a nondeterministic choice of any free
		 * slot would cover the code's order exactly, at more states. */
		s = 0;
		do
		:: s < NSLOT && wused[s] -> s++
		:: else -> break
		od;
		assert(s < NSLOT);	/* bound: NSLOT slots are enough */
		wused[s] = 1;
		wcookie[s] = r;
#ifdef MUTANT_SAME_GENERATION
		if
		:: wgen[s] == 0 -> next_gen++; wgen[s] = next_gen
		:: else		/* the slot's last generation again */
		fi;
#else
		next_gen++;
		wgen[s] = next_gen;
#endif
		word[s] = WORD(wgen[s]);
		assert(itv[s] == ITV_NONE);
		scoll[s] = 0;
		if
		:: inv == INV_ODD -> itv[s] = ITV_DEFER_INS; sinv[s] = 1
		:: inv == INV_EVEN -> inv = INV_ODD; itv[s] = ITV_TREE; sinv[s] = 1
		:: inv == INV_IDLE -> itv[s] = ITV_TREE; sinv[s] = 0
		fi
	};
	/* @code kmod/mrmon_watch.c:mrmon_watch_one:214-214 */
	read_begin(s, bad);
	/* @code kmod/mrmon_watch.c:mrmon_watch_snapshot:158-159 */
	mrmon_snapshot(s, 0, fp, bad);
	/* the read_retry check, and the return (K's ghosts: the word vouches
	 * for the pages mapped now; any change after this clears it) */
	/* @code kmod/mrmon_watch.c:mrmon_watch_snapshot:160-165 */
	/* @code kmod/mrmon_watch.c:mrmon_watch_one:217-219 */
	atomic {
		if
		:: !bad && !scoll[s] -> wfp[s] = fp; wsnap[s] = 1
		:: else
		fi;
		e = WORD(wgen[s]);
		karmed[s] = 1;
		kpages[s] = mapped;
		fp = 0; bad = 0
	}
}

/* mrmon_unwatch_one(): the word cleared under ctx->lock, then
 * mmu_interval_notifier_remove() (which waits for an invalidation in
 * progress to end), then the watch freed.  The mutant removes first.
 * r: the region whose watch this is, for the caller's bookkeeping
 * (NONE: none to do). */
inline mrmon_unwatch_one(s, r)
{
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:248-251 */
	assert(wused[s]);
#ifdef MUTANT_UNWATCH_REMOVE_FIRST
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:256-257 */
	itv_remove(s);
	itv[s] == ITV_NONE;
#endif
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:252-255 */
	atomic { word[s] = word[s] & ~VALID; karmed[s] = 0; kpages[s] = 0 };
#ifndef MUTANT_UNWATCH_REMOVE_FIRST
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:256-257 */
	itv_remove(s);
#endif
	/* The remove returns once the sub is out of the tree, and the watch
	 * is freed.  The caller's bookkeeping after the ioctl (kernel_unwatch
	 * forgets the generation; region_free or region_discard drops the
	 * watch) is folded in: nothing else reads it. */
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:258-259 */
	/* @code kmod/mrmon_watch.c:mrmon_watch_free:143-147 */
	/* @code lib/monitor/kernel.c:kernel_unwatch_many:291-292 */
	atomic {
		itv[s] == ITV_NONE ->
		wused[s] = 0;
		kgens[s] = 0;
		/* what nobody reads any more, zeroed: fewer states (the word
		 * keeps gen << 1 in the code; a reader of a free slot's word
		 * compares it with an odd value, so 0 tells it the same) */
		word[s] = 0;
		wcookie[s] = 0; wchanged[s] = 0; wsnap[s] = 0; wfp[s] = 0;
		sinv[s] = 0; scoll[s] = 0;
#ifndef MUTANT_SAME_GENERATION
		wgen[s] = 0;
#endif
		/* last: s may be rslot[r] */
		if
		:: r != NONE -> rslot[r] = NONE; rexp[r] = 0
		:: else
		fi
	}
}

/* mrmon_revalidate_one(): e in: the expected word; out: the same word if
 * it was never cleared, the new one if re-armed, 0 if it cannot be. */
inline mrmon_revalidate_one(s, e, fp, bad)
{
	/* The checks and read_begin's read of the seq are one step: a
	 * callback between them is as one before both (the word stays clear;
	 * it sets changed, or the snapshot sees its pages). */
	/* @code kmod/mrmon_watch.c:mrmon_revalidate_one:273-287 */
	/* @code kmod/mrmon_watch.c:mrmon_watch_find:232-235 */
	/* @linux mm/mmu_notifier.c:mmu_interval_read_begin */
	atomic {
		if
		:: !wused[s] || WORD(wgen[s]) != e -> bad = 1	/* -ESTALE */
		:: wused[s] && word[s] == e -> bad = 2		/* never cleared */
		:: else ->
			if
			:: !wsnap[s] || wchanged[s] -> bad = 1
			:: else -> bad = 0
#ifndef MUTANT_REVALIDATE_NO_RETRY
				; scoll[s] = 0; fp = sinv[s]
#endif
			fi
		fi
	};
	if
	:: bad == 0 ->
#ifndef MUTANT_REVALIDATE_NO_RETRY
		if
		:: fp -> !sinv[s]		/* read_begin sleeps */
		:: else
		fi;
		/* @code kmod/mrmon_watch.c:mrmon_revalidate_one:288-290 */
		mrmon_snapshot(s, 1, fp, bad);
#else
		/* a snapshot with no notifier seq: no collision is seen */
		atomic { bad = !PINNED; fp = mapped };
#endif
		/* @code kmod/mrmon_watch.c:mrmon_revalidate_one:291-299 */
		atomic {
			if
			:: !bad &&
#ifndef MUTANT_REVALIDATE_NO_RETRY
			   !scoll[s] &&
#endif
#ifndef MUTANT_REVALIDATE_NO_FINGERPRINT
			   fp == wfp[s] &&
#endif
			   !wchanged[s] ->
				next_gen++;
				wgen[s] = next_gen;
				word[s] = WORD(wgen[s]);
				e = word[s];
				karmed[s] = 1;
				kpages[s] = wfp[s];
				check_kernel()
			:: else -> e = 0
			fi;
			fp = 0; bad = 0
		}
	:: bad == 2 -> bad = 0
	:: bad == 1 -> bad = 0; e = 0
	fi
}

/* ================ the unmapping thread (mm/) ================ */

proctype unmapper()
{
	byte n, s, notify, kind;
	for (n : 1 .. NUNMAP) {
		/* invalidate_range_start: the walk calls every interval in the
		 * tree now; the tree stays frozen until its end */
		/* @linux mm/mmu_notifier.c:mn_itree_inv_start_range */
		atomic {
			notify = 0;
			for (s : 0 .. NSLOT - 1) {
				if
				:: itv[s] == ITV_TREE || itv[s] == ITV_DEFER_RM ->
					notify = notify | (1 << s)
				:: else
				fi
			}
			if
			:: notify != 0 -> inv = INV_ODD
			:: else -> inv = INV_EVEN
			fi;
			s = 0
		}
		/* @linux mm/mmu_notifier.c:mn_itree_invalidate */
		for (s : 0 .. NSLOT - 1) {
			if
			:: notify & (1 << s) -> mrmon_invalidate(s, kind)
			:: else
			fi
		}
		/* the page tables change (unmap_page_range, a COW copy, a
		 * split): other pages, or for a CLEAR maybe the same ones */
		/* @linux mm/memory.c:unmap_page_range */
		atomic {
			if
			:: kind != EV_UNMAP		/* a split */
			:: nver++; mapped = nver
#ifndef NO_ABA
			:: kind != EV_UNMAP && mapped != 1 -> mapped = 1
#endif
			fi;
			check_library();
			check_kernel()
		}
		/* invalidate_range_end: the seq goes even, deferred inserts
		 * and removes happen, read_begin and remove sleepers wake */
		/* @linux mm/mmu_notifier.c:mn_itree_inv_end */
		atomic {
			inv = INV_IDLE;
			for (s : 0 .. NSLOT - 1) {
				sinv[s] = 0;
				if
				:: itv[s] == ITV_DEFER_INS -> itv[s] = ITV_TREE
				:: itv[s] == ITV_DEFER_RM -> itv[s] = ITV_NONE
				:: else
				fi
			}
			s = 0; notify = 0; kind = EV_ANY
		}
		/* the unmapping call returns */
	}
	done++
}

#ifdef MUTANT_DEFERRED_INVALIDATE
proctype worker()
{
	byte s;
	do
	:: atomic {
		deferred != 0 ->
		s = 0;
		do
		:: deferred & (1 << s) -> break
		:: else -> s++
		od;
		deferred = deferred & ~(1 << s)
	   };
	   atomic {
		if
		:: wused[s] -> mrmon_word_clear_locked(s, 0)
		:: else		/* unwatched meanwhile */
		fi
	   }
	:: atomic { done == NT + 1 && deferred == 0 } -> break
	od;
	done++
}
#endif

/* ====================== user space: lib/ ====================== */

inline cache_lock(me)
{
	/* @code lib/cache/cache.c:mrc_cache_lock:73-74 */
	atomic { lock == NONE -> lock = me }
}

inline cache_unlock(me)
{
	/* @code lib/cache/cache.c:mrc_cache_unlock:93-94 */
	d_step { assert(lock == me); lock = NONE }
}

/* region_reclaim() queues a dead region with no reference; before the
 * lock is released (or when 64 wait, or an eviction or registration needs
 * the room) reclaim_flush() claims each (reclaim_claim: no hazard slot
 * holds it, then the CAS DEAD|0 -> DEAD|RECLAIMED), deregisters the lot,
 * unwatches it (kernel_unwatch_many() -> one UNWATCH batch), then
 * region_free() each.  Under cache->lock throughout, and nothing reads a
 * RECLAIMED region's registration or watch in between (a hit backs off on
 * the flag first), so the model folds the queue, the deregistration, the
 * unwatch and the free into the claim's step.  The slots are read in a
 * step before the CAS: a hit may publish in between (and then sees DEAD).
 * The C code reads the slots one by one; one step here is the same under
 * sequential consistency, as a publish after the read of its slot is a
 * publish after the whole read. */
inline region_reclaim(r, won)
{
	/* @code lib/cache/cache.c:region_reclaim:275-277 */
	/* @code lib/cache/cache.c:reclaim_claim:221-221 */
#ifdef MUTANT_RECLAIM_MISSES_SLOT
	won = 1;
#else
	won = !HELD_BY_SLOT(r);
#endif
	/* @code lib/cache/cache.c:reclaim_claim:222-227 */
	atomic {
		if
		:: won && rstate[r] == R_DEAD && refs[r] == 0 ->
			assert(!GHELD(r));	/* HELD */
			rstate[r] = R_FREE;
			rpages[r] = 0		/* backend_dereg() */
		:: else -> won = 0
		fi
	};
	if
	:: won ->
		/* @code lib/cache/cache.c:reclaim_flush:252-263 */
		/* @code lib/monitor/kernel.c:kernel_unwatch_many:286-290 */
		/* @code lib/monitor/kernel.c:kmon_unwatch_entries:262-263 */
#ifdef EARLY_UNWATCH
		if
		:: runw[r] -> d_step { runw[r] = 0; rslot[r] = NONE; rexp[r] = 0 }
		:: else -> mrmon_unwatch_one(rslot[r], r)
		fi
#else
		mrmon_unwatch_one(rslot[r], r)
#endif
	:: else
	fi
}

/* region_unref(): a CAS decrement; whoever leaves a DEAD region at zero
 * takes cache->lock (never held by its caller) and tries
 * region_reclaim(). */
inline region_unref(me, r, won)
{
	/* @code lib/cache/cache.c:region_unref:330-337 */
	atomic {
		assert(refs[r] > 0);
		refs[r]--;
		won = (refs[r] == 0 && rstate[r] == R_DEAD)
	};
	if
	:: won ->
		/* @code lib/cache/cache.c:region_release_dead:287-289 */
		cache_lock(me);
		region_reclaim(r, won);
		cache_unlock(me)
	:: else
	fi;
	won = 0
}

/* region_kill(): out of the index (mrc_index_clear), fetch_or DEAD; if the
 * count was zero, region_reclaim() now, else the last region_unref() does.
 * Under cache->lock. */
inline region_kill(r, won)
{
	/* @code lib/cache/cache.c:region_kill:358-360 */
	if
	:: index == r -> index = NONE
	:: else
	fi;
	/* @code lib/cache/cache.c:region_kill:382-384 */
	atomic {
		assert(rstate[r] == R_LIVE);
		rstate[r] = R_DEAD;
		won = (refs[r] == 0)
	};
	if
	:: won -> region_reclaim(r, won)
#ifdef EARLY_UNWATCH
	:: else ->	/* the variant: UNWATCH now, in its real order */
		mrmon_unwatch_one(rslot[r], NONE);
		runw[r] = 1
#else
	:: else
#endif
	fi
}

/* kernel_revalidate(), from region_revalidated() for a rescan:
 * REVALIDATE {slot, expected}; re-armed, kmon_rearmed() keeps the new
 * generation and stores the new expected word.  e out: nonzero if re-armed
 * (or never cleared). */
inline kernel_revalidate(r, e, fp, bad)
{
	/* @code lib/monitor/kernel.c:kernel_revalidate:314-317 */
	e = rexp[r];
	mrmon_revalidate_one(rslot[r], e, fp, bad);
	if
	:: e != 0 ->
		/* @code lib/monitor/kernel.c:kernel_revalidate:319-319 */
		/* @code lib/monitor/kernel.c:kmon_rearmed:307-308 */
		d_step { kgens[rslot[r]] = e >> 1; rexp[r] = e }
	:: else
	fi
}

/* kill_if_changed() for the one indexed region, from mrc_cache_event(): its
 * word no longer holds the expected value: kill it (region_revalidated()
 * does nothing for an event's cause: drain() already tried). */
inline kill_if_changed(r, won)
{
	/* @code lib/cache/invalidate.c:kill_if_changed:71-74 */
	if
	:: r != NONE && rstate[r] == R_LIVE && index == r &&
	   word[rslot[r]] != rexp[r] -> region_kill(r, won)
	:: else
	fi
}

/* kill_if_changed() from mrc_cache_rescan(), whose lost events may have
 * been CLEARs: region_revalidated() -> kernel_revalidate() first; kill
 * unless it re-armed the watch and the word still holds the new value. */
inline rescan_if_changed(r, won, e, fp, bad)
{
	/* @code lib/cache/invalidate.c:kill_if_changed:71-72 */
	if
	:: r != NONE && rstate[r] == R_LIVE && index == r &&
	   word[rslot[r]] != rexp[r] ->
		/* @code lib/cache/invalidate.c:region_revalidated:62-64 */
		kernel_revalidate(r, e, fp, bad);
		atomic { e = (e != 0 && word[rslot[r]] == rexp[r]) };
		if
		:: e == 0 ->
			/* @code lib/cache/invalidate.c:kill_if_changed:73-74 */
			region_kill(r, won)
		:: else -> e = 0
		fi
	:: else
	fi
}

/* mrc_cache_drain_locked() -> kernel_drain(): read() the ring
 * (mrmon_read -> mrmon_event_pop: an unreported overflow first, as an
 * OVERFLOW event), unless hdr->pending reads 0: the module writes it
 * under ctx->lock with every change of the ring, so that one load sees
 * what a read() at that instant would return, and the step below with
 * qlen 0 and no overflow is what either does; kmon_revalidate_events(): the CLEAR events whose watch
 * is still ours (its generation) go to REVALIDATE in one batch, and those
 * re-armed take their new word; then in order: OVERFLOW ->
 * mrc_cache_rescan(); an event still ours -> mrc_cache_event(cookie).
 * Under cache->lock. */
inline kernel_drain(ev, ec, es, eg, eclr, ov, r, won, e, fp, bad)
{
	/* @code lib/cache/invalidate.c:mrc_cache_drain_locked:117-118 */
	/* @code lib/monitor/kernel.c:kernel_drain:375-376 */
	/* @code lib/monitor/kernel.c:kernel_pending:362-362 */
	/* @code kmod/mrmon_main.c:mrmon_read:261-269 */
	/* @code kmod/mrmon_notify.c:mrmon_event_pop:168-182 */
	atomic {
		ov = overflow;
		overflow = 0;
		ev = qlen;
		if
		:: qlen > 0 ->
			ec = qcookie[0]; es = qslot[0]; eg = qgen[0]; eclr = qclr[0];
			qcookie[0] = 0; qslot[0] = 0; qgen[0] = 0; qclr[0] = 0
		:: else
		fi;
		qlen = 0
	};
	/* @code lib/monitor/kernel.c:kernel_drain:378-378 */
	/* @code lib/monitor/kernel.c:kmon_revalidate_events:336-345 */
	if
	:: ev > 0 && eclr && kgens[es] == eg ->
		r = OWNER(es);
		e = rexp[r];
		/* @code lib/monitor/kernel.c:kmon_revalidate_events:349-352 */
		mrmon_revalidate_one(es, e, fp, bad);
		if
		:: e != 0 ->
			/* @code lib/monitor/kernel.c:kmon_revalidate_events:353-355 */
			/* @code lib/monitor/kernel.c:kmon_rearmed:307-308 */
			d_step { kgens[es] = e >> 1; rexp[r] = e; e = 0 }
		:: else
		fi;
		r = 0
	:: else
	fi;
#ifndef MUTANT_OVERFLOW_LOST
	/* @code lib/monitor/kernel.c:kernel_drain:380-382 */
	/* @code lib/cache/invalidate.c:mrc_cache_rescan:102-106 */
	if
	:: ov -> r = index; rescan_if_changed(r, won, e, fp, bad)
	:: else
	fi;
#endif
	/* @code lib/monitor/kernel.c:kernel_drain:383-386 */
	/* @code lib/cache/invalidate.c:mrc_cache_event:89-90 */
	if
	:: ev > 0 && kgens[es] == eg -> kill_if_changed(ec, won)
	:: else
	fi;
	d_step { ev = 0; ec = 0; es = 0; eg = 0; eclr = 0; ov = 0; won = 0; r = 0 }
}

/* cache_register(): region_alloc() (free -> PENDING, keeping a stale
 * reader's count), monitor_watch() -> kernel_watch() -> WATCH,
 * mrc_index_set() (pending regions are in the index), backend_reg(), the
 * re-check region_intact(); on a mismatch region_discard() and -ESTALE;
 * else publish: fetch_add(1 - PENDING) gives the caller its reference.
 * Under cache->lock. */
inline cache_register(r, s, e, ok, got, fp, bad)
{
	/* @code lib/cache/cache.c:cache_register:707-707 */
	d_step {
		r = 0;
		do
		:: r < NREG && rstate[r] != R_FREE -> r++
		:: else -> break
		od;
		assert(r < NREG)	/* bound: NREG structs are enough */
	};
#ifdef MUTANT_REG_BEFORE_WATCH
	atomic { rstate[r] = R_PENDING; rpages[r] = mapped };	/* backend_reg() */
#endif
	/* @code lib/cache/cache.c:cache_register:711-711 */
	/* @code lib/monitor/kernel.c:kernel_watch:239-243 */
	mrmon_watch_one(r, s, e, fp, bad);
	/* kernel_watch() keeps what WATCH returned; the region enters the
	 * index, pending (a hit there backs off) */
	/* @code lib/monitor/kernel.c:kernel_watch:247-250 */
	/* @code lib/cache/cache.c:cache_register:716-717 */
	d_step {
		rslot[r] = s; rexp[r] = e; kgens[s] = e >> 1;
		index = r
	};
#ifndef MUTANT_REG_BEFORE_WATCH
	/* @code lib/cache/cache.c:cache_register:734-734 */
	rpages[r] = mapped;		/* backend_reg() */
#endif
#ifdef MUTANT_NO_RECHECK
	atomic { ok = 1; rstate[r] = R_LIVE; refs[r]++ };
#else
	/* region_intact(), the re-check, and the publish in one step: in
	 * between, a hit backs off the pending region as it would a live one
	 * whose word was cleared */
	/* @code lib/cache/cache.c:cache_register:740-750 */
	/* @code lib/cache/cache.c:cache_register:758-762 */
	atomic {
		if
		:: word[s] == e -> GET_RETURNS(r); ok = 1; rstate[r] = R_LIVE; refs[r]++
		:: else -> ok = 0
		fi
	};
#endif
	if
	:: ok -> got = r
	:: else ->
		/* @code lib/cache/cache.c:region_discard:399-404 */
		d_step { index = NONE; rpages[r] = 0 };
		/* @code lib/cache/cache.c:region_discard:405-406 */
		mrmon_unwatch_one(s, r);
		/* @code lib/cache/cache.c:region_discard:407-412 */
		rstate[r] = R_FREE
	fi
}

/* cache_get_slow(): cache->lock, drain, then until it has a region: look
 * again; a region whose word changed is killed (its event not read yet);
 * an intact one was registered by another thread meanwhile: reference it;
 * else cache_register(), again on -ESTALE. */
inline cache_get_slow(me, got, r, s, e, ok, won, ev, ec, es, eg, eclr, ov, fp, bad)
{
	/* @code lib/cache/cache.c:cache_get_slow:779-780 */
	cache_lock(me);
	kernel_drain(ev, ec, es, eg, eclr, ov, r, won, e, fp, bad);
	do
	:: got == NONE ->
		/* @code lib/cache/cache.c:cache_get_slow:784-790 */
		atomic {
			r = index;	/* mrc_index_lookup(): writers hold the lock */
			ok = (r != NONE && word[rslot[r]] == rexp[r]);	/* region_intact() */
			if
			:: ok -> GET_RETURNS(r)
			:: else
			fi
		};
		if
		:: ok ->
			/* @code lib/cache/cache.c:cache_get_slow:792-798 */
			atomic { refs[r]++; got = r }
		:: !ok && r != NONE ->
			/* @code lib/cache/cache.c:cache_get_slow:786-789 */
			region_kill(r, won);
			/* @code lib/cache/cache.c:cache_get_slow:800-800 */
			cache_register(r, s, e, ok, got, fp, bad)
		:: !ok && r == NONE ->
			/* @code lib/cache/cache.c:cache_get_slow:800-800 */
			cache_register(r, s, e, ok, got, fp, bad)
		fi
	:: else -> break
	od;
	/* @code lib/cache/cache.c:cache_get_slow:804-804 */
	cache_unlock(me)
}

/* slot_clear(): clear this thread's slot, then (a step of its own) read
 * the region's word: DEAD with no reference means a reclaim may have left
 * it to this thread, which then takes cache->lock and tries
 * region_reclaim(). */
inline slot_clear(me, r, won)
{
	/* @code lib/cache/cache.c:slot_clear:301-303 */
	hslot[me] = NONE;
	/* @code lib/cache/cache.c:slot_clear:304-305 */
	won = (rstate[r] == R_DEAD && refs[r] == 0);
	if
	:: won ->
		/* @code lib/cache/cache.c:region_release_dead:287-289 */
		cache_lock(me);
		region_reclaim(r, won);
		cache_unlock(me)
	:: else
	fi;
	won = 0
}

/* An application thread: mrcache_get(), use, mrcache_put(), NGET times. */
proctype app(byte me)
{
	byte n, r, old, got, s, e, w, ev, ec, es, eg, fp, bad;
	bit ok, won, ov, good, eclr, viaslot;
	for (n : 1 .. (me == 0 -> NGET0 : NGET1)) {
		/* mrcache_get() -> cache_hit(): mrc_index_lookup(), lock
		 * free, may be stale */
		/* @code lib/cache/cache.c:mrcache_get:848-848 */
		/* @code lib/cache/cache.c:cache_hit:604-606 */
		got = NONE;
		r = index;
		if
		:: r != NONE ->
#ifdef MUTANT_EARLY_WORD_CHECK
			atomic { s = rslot[r]; e = rexp[r] };
			ok = (s != NONE && word[s] == e);
			atomic {
				old = rstate[r]; refs[r]++;	/* fetch_add */
				if
				:: old == R_LIVE && ok -> GET_RETURNS(r); got = r
				:: else
				fi
			};
#else
			/* try_hit(): publish r in this thread's hazard slot,
			 * then read its word (MUTANT_SLOT_AFTER_CHECK: the other
			 * way round) */
#ifndef MUTANT_SLOT_AFTER_CHECK
			/* @code lib/cache/cache.c:slot_publish:569-572 */
			hslot[me] = r;
#endif
			/* @code lib/cache/cache.c:try_hit:592-592 */
			old = rstate[r];
			if
			:: old == R_LIVE ->
				/* The range and access checks: one range,
				 * always.
				 * region_intact(): two loads, the word and the
				 * expected value (which a re-arm changes, under
				 * the lock), in an order C leaves open.  The
				 * word's load decides: GET_RETURNS is taken there
				 * (good) and must hold if the expected value read
				 * next matches.  Word first covers expected first:
				 * a re-arm's word is new, so an expected value
				 * read before an update never matches a word
				 * read after it. */
				/* @code lib/cache/cache.c:hit_valid:534-539 */
				/* @code lib/cache/region.h:region_intact:112-113 */
				/* (a guard for the mutants, under which r may be
				 * freed meanwhile: its watch gone, no word) */
				atomic {
					w = (rslot[r] != NONE -> word[rslot[r]] : NONE);
					good = (rpages[r] == mapped)
				};
				atomic {
					if
					:: w == rexp[r] -> assert(good); got = r
					:: else
					fi
				}
			:: else
			fi;
#ifdef MUTANT_SLOT_AFTER_CHECK
			hslot[me] = r;
#endif
			if
			:: got == NONE ->
				/* @code lib/cache/cache.c:try_hit:597-597 */
				slot_clear(me, r, won)
			:: else ->
				/* HELD: the region a hit returns is not reclaimed */
				d_step {
					assert(rstate[r] == R_LIVE || rstate[r] == R_DEAD);
					gheld[me] = r; viaslot = 1
				}
			fi
#endif
#ifdef MUTANT_EARLY_WORD_CHECK
			if
			:: got == NONE ->
				/* @code lib/cache/cache.c:try_hit_ref:556-556 */
				region_unref(me, r, won)
			:: else -> gheld[me] = r
			fi
#endif
		:: else
		fi;
		d_step { old = 0; e = 0; w = 0; good = 0; ok = 0 };
		if
		:: got == NONE ->
			/* @code lib/cache/cache.c:mrcache_get:850-850 */
			cache_get_slow(me, got, r, s, e, ok, won, ev, ec, es, eg, eclr, ov, fp, bad);
			gheld[me] = got
		:: else
		fi;
		/* the application uses got, then mrcache_put(): region_unref(),
		 * then drain if events_waiting() and the lock is free */
		d_step { r = 0; old = 0; s = 0; e = 0; ok = 0 };
		/* @code lib/cache/cache.c:mrcache_put:886-886 */
		gheld[me] = NONE;
		if
		:: viaslot ->
			/* @code lib/cache/cache.c:put_slot:864-866 */
			slot_clear(me, got, won)
		:: else -> region_unref(me, got, won)
		fi;
		/* @code lib/cache/cache.c:mrcache_put:888-891 */
		atomic {
			ok = ((qlen > 0 || overflow) && lock == NONE);
			if
			:: ok -> lock = me
			:: else
			fi
		};
		if
		:: ok ->
			kernel_drain(ev, ec, es, eg, eclr, ov, r, won, e, fp, bad);
			cache_unlock(me)
		:: else
		fi;
		d_step { got = NONE; ok = 0; viaslot = 0 }
	}
	done++
}

/* A progress thread: mrcache_progress() or mrcache_flush() (evict every
 * unused region: region_evictable(), then region_kill()) at any time; when
 * every other thread is done, one last cache call and the end-state checks. */
proctype reclaimer()
{
	byte r, ev, ec, es, eg, e, fp, bad;
	bit won, ov, eclr;
	/* @code lib/cache/cache.c:whole_cache_call:979-983 */
	cache_lock(NT);
	kernel_drain(ev, ec, es, eg, eclr, ov, r, won, e, fp, bad);
	r = index;
	if
	:: r != NONE && rstate[r] == R_LIVE && refs[r] == 0 && !HELD_BY_SLOT(r) ->
		/* @code lib/cache/cache.c:flush_locked:959-960 */
		/* @code lib/cache/cache.c:region_evictable:422-423 */
		region_kill(r, won)
	:: true
	fi;
	cache_unlock(NT);
	r = 0;

	done == NDONE;
	/* @code lib/cache/cache.c:whole_cache_call:979-983 */
	cache_lock(NT);
	kernel_drain(ev, ec, es, eg, eclr, ov, r, won, e, fp, bad);
	/* No leaks: every region struct is free, or cached validly with no
	 * reference left; every slot in use is owned by exactly one region
	 * and has its notifier in the tree; no invalidation is left. */
	assert(inv == INV_IDLE);
	assert(hslot[0] == NONE && hslot[NT - 1] == NONE);
	for (r : 0 .. NREG - 1) {
		assert(refs[r] == 0);
		if
		:: rstate[r] == R_FREE -> assert(rpages[r] == 0 && rslot[r] == NONE)
		:: rstate[r] == R_LIVE ->
			assert(index == r && rpages[r] == mapped);
			assert(word[rslot[r]] == rexp[r])
		:: else -> assert(false)
		fi
	}
	for (ev : 0 .. NSLOT - 1) {
		ec = 0;
		for (r : 0 .. NREG - 1) {
			if
			:: rslot[r] == ev -> ec++
			:: else
			fi
		}
		assert(ec == wused[ev]);
		assert((itv[ev] == ITV_TREE) == wused[ev]);
		assert(wused[ev] || itv[ev] == ITV_NONE)
	}
	cache_unlock(NT)
}

init
{
	byte i;
	atomic {
		for (i : 0 .. NREG - 1) { rslot[i] = NONE }
		for (i : 0 .. NT - 1) { hslot[i] = NONE; gheld[i] = NONE }
		for (i : 0 .. NT - 1) { run app(i) }
		run unmapper();
#ifdef MUTANT_DEFERRED_INVALIDATE
		run worker();
#endif
		run reclaimer()
	}
}

/* Liveness: every registration that pins pages no longer mapped is
 * eventually deregistered (pan -a). */
ltl reclaimed {
	[] ((stale(0) -> <> !stale(0)) &&
	    (stale(1) -> <> !stale(1)) &&
	    (stale(2) -> <> !stale(2)))
}
