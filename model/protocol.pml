/* SPDX-License-Identifier: MIT */
/*
 * protocol.pml - the invalidation protocol between the mrmon kernel module
 * (kmod/, ABI 3: one mmu_notifier per descriptor, the module's own
 * interval tree of watches under ctx->lock), the cache (lib/cache/cache.c,
 * lib/cache/invalidate.c, lib/monitor/kernel.c) and the application, as a
 * Promela model for Spin.  docs/protocol.md explains it; model/verify.sh
 * checks it (make check-model).
 *
 * The model is the code.  Every step names the code it stands for, in a
 * comment of its own, in one of two forms:
 *   @code FILE:FUNCTION:FIRST-LAST   lines FIRST..LAST of FUNCTION in FILE,
 *                                    in this tree; model/coderefs.sh (in
 *                                    make check-model) fails when the file
 *                                    or the function is gone or the lines
 *                                    are no longer inside the function
 *   @linux FILE:FUNCTION             the Linux kernel, not in this tree
 * A commit that changes a step in the code changes this file with it.
 *
 * Abstractions (docs/protocol.md, "The model"):
 *  - One address range.  Every watch and every region covers it, so every
 *    invalidation overlaps every watch in the tree and a range in flight
 *    (ctx->inflight) always overlaps a WATCH's range (mrmon_collides is
 *    "an invalidation is in flight"), and a hit's range
 *    and access check (region_covers) always passes.
 *  - "Pages" are the version of the mapping at that address: what a
 *    registration pins.  The unmapping thread changes the range NUNMAP
 *    times; each change maps other pages, or the same ones (a VMA or
 *    huge-page split).  Every change that passes mrmon_mn_start's filter
 *    clears the words, whatever it does to the pages; a permission-only
 *    event (filtered out) changes no pages and is not modelled.
 *  - One invalidation at a time (one unmapping thread): ctx->inflight
 *    holds 0 or 1 range (inflight).  mrmon_mn_start records its range,
 *    and clears and unlinks every watch in the tree in one ctx->lock
 *    section; the page tables change; mrmon_mn_end removes its range.
 *  - A ctx->lock section, a library atomic read-modify-write, a read of
 *    the event ring, are one step each; every other shared access is a
 *    step of its own, under sequential consistency (the code's
 *    acquire/release pairs are what make that assumption hold).  A few
 *    consecutive steps of one thread are merged where no other process can
 *    tell (each place says why).  ctx->mutex is implied: only the cache
 *    uses the descriptor, always under cache->lock.
 *  - WATCH's "not armed" answer changes nothing shared, so the library's
 *    retry (sched_yield, WATCH again) is modelled as a wait for the
 *    invalidation's end, not a spin: the same states, no stutter cycle.
 *  - Slots: WATCH takes a free one; an invalidation unlinks the watch and
 *    keeps the slot off the free stack until read() hands over its event
 *    (or the OVERFLOW event, for a slot in limbo); UNWATCH puts it back at
 *    once.  With no free slot WATCH says -ENOSPC and the get fails, as in
 *    the code (the library sizes the table so that this does not happen;
 *    the model's two slots do run out).
 *  - Only the kernel monitor: the user-side monitors (uffd, hooks) and the
 *    bpf monitor are not modelled.
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
 *                 means the pages mapped are the ones mapped when WATCH
 *                 returned; checked at every page change
 *   slot          (the module) a slot is put back on the free stack only
 *                 when it holds no watch and is not already there
 *   end state     no leak: every region free or cached validly, every slot
 *                 owned by one region with its watch in the tree, or free;
 *                 no event, overflow or invalidation left; no deadlock
 *                 (every process reaches its end)
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
 *   MUTANT_WATCH_NO_ACTIVE_CHECK  WATCH arms the word and inserts the watch
 *                               without looking at the invalidations in
 *                               flight (mrmon_collides): a tree insert
 *                               racing an invalidation of its range (what
 *                               MUTANT_WATCH_NO_WAIT was for ABI 2)
 *   MUTANT_WATCH_SPLIT_LOCK     WATCH checks the active range in one
 *                               ctx->lock section and inserts in another
 *   MUTANT_UNWATCH_STALE_FREE   UNWATCH does not check that the slot still
 *                               holds the watch: it frees the slot of a
 *                               watch an invalidation unlinked, whose
 *                               event is still queued (the slot goes back
 *                               twice)
 *   MUTANT_TRUST_NOT_ARMED      the library takes a "not armed" answer
 *                               (slot 0, expected 0) as a watch
 *   MUTANT_OVERFLOW_LOST        an event-queue overflow is dropped, with
 *                               no rescan: a leak, caught by the liveness
 *                               property and by the end-state check
 *   MUTANT_SAME_GENERATION      a reused slot keeps its generation: a
 *                               region whose watch an invalidation
 *                               cleared keeps its slot number until it is
 *                               reclaimed, the slot is reused once the
 *                               event is read, and the region's UNWATCH
 *                               then matches the new watch and removes it
 *                               (with EARLY_UNWATCH, also a stale hit)
 *   MUTANT_UNWATCH_REMOVE_FIRST UNWATCH unlinks the watch, then clears the
 *                               word in a later section (mrmon before
 *                               issue 13): breaks K
 *   MUTANT_NO_RECHECK           no re-check of the word after registering:
 *                               the get returns pages an invalidation
 *                               replaced after WATCH
 *   MUTANT_RECLAIM_MISSES_SLOT  reclaim does not look at the hazard slots:
 *                               a region a hit holds is deregistered
 *   MUTANT_SLOT_AFTER_CHECK     a hit checks the region, then publishes it
 *                               in its slot: reclaim in between is missed
 *   MUTANT_LOST_FOREIGN_CLEAR   a failed hit whose slot a put by another
 *                               thread cleared lets go of nothing: the hold
 *                               that put meant stays in a slot for good
 *                               (the leak test-cache-hazard-stress found)
 *  tolerated (must pass; docs/protocol.md says why)
 *   MUTANT_SLOT_REUSE_EARLY     an invalidation puts the slot back at once,
 *                               not when its event is read: the library
 *                               drops the event by its generation
 *   MUTANT_UNWATCH_REMOVE_FIRST with NO_KERNEL_CHECK: the library never
 *                               reads a word it is unwatching
 *  other switches
 *   EARLY_UNWATCH               a design variant: region_kill() unwatches a
 *                               held region at once; safe only with a new
 *                               generation per watch
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
#ifndef NSLOT
#define NSLOT	2	/* mrmon slots (beyond them WATCH says -ENOSPC) */
#endif
#define QLEN	1	/* mrmon event ring: one entry, so it overflows */

#define NONE	255
#define GET_FAILED	254	/* cache_get_slow() returned an error */
#define VALID	1			/* MRMON_WORD_VALID, MRC_WORD_VALID */
#define WORD(g)	(((g) << 1) | VALID)	/* mrmon_word_of(gen) */

/* refstate's flags (lib/cache/region.h); the count is refs[]. */
#define R_FREE		0	/* DEAD|RECLAIMED: in the free list */
#define R_PENDING	1	/* PENDING: being registered by a miss */
#define R_LIVE		2	/* no flag: in the index, handed out */
#define R_DEAD		3	/* DEAD: out of the index for good */

/* ---- the address space: struct mm_struct ---- */
byte mapped = 1;	/* version of the pages mapped at the address */
byte nver = 1;		/* newest version so far */

/* ---- kmod: struct mrmon_ctx, struct mrmon_watch (ctx->lock) ---- */
bit inflight;		/* ctx->ninflight != 0 (one unmapping thread); its
			 * range is the one range */
byte word[NSLOT];	/* ctx->words[]: gen << 1 | valid */
byte wgen[NSLOT];	/* w->gen of the slot's watch (kept until the slot is free) */
byte next_gen;		/* ctx->next_gen */
bit wused[NSLOT];	/* ctx->slot_watch[slot] != NULL: the watch is in the tree */
bit sfree[NSLOT];	/* the slot is on ctx->free_slots */
byte wcookie[NSLOT];	/* w->cookie: the region */
bit limbo[NSLOT];	/* in ctx->limbo: its event was lost to an overflow */
byte qcookie[QLEN];	/* ctx->ring[]: cookie, slot, generation */
byte qslot[QLEN];
byte qgen[QLEN];
byte qlen;		/* ctx->ring_count */
bit overflow;		/* ctx->overflow_unreported */
#ifdef MUTANT_DEFERRED_INVALIDATE
byte deferred;		/* slots whose word a work item still has to clear */
#endif
#ifdef MUTANT_UNWATCH_REMOVE_FIRST
byte rmfirst = NONE;	/* the slot UNWATCH unlinked, its word not cleared yet */
#endif
/* Ghosts for K: the pages a valid word vouches for. */
bit karmed[NSLOT];	/* WATCH returned the word */
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
byte kown[NSLOT];	/* kernel_monitor->slots[].w: its region; NONE: none */
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

/* ====================== kernel: kmod/ ====================== */

/* mrmon_slot_put(), under ctx->lock: the slot goes back on the free stack.
 * A slot put twice would be on the stack twice, and two watches could
 * then share it: the model says so at once. */
inline mrmon_slot_put(s)
{
	/* @code kmod/mrmon_watch.c:mrmon_slot_put:134-135 */
	assert(!sfree[s] && !wused[s]);
	sfree[s] = 1;
	/* What nobody reads any more, zeroed: fewer states.  The code keeps
	 * gen << 1 in the word; a reader of a free slot's word compares it
	 * with an odd value, so 0 tells it the same (except a reader that
	 * took expected 0 as armed: that mutant keeps the word). */
#ifndef MUTANT_TRUST_NOT_ARMED
	word[s] = 0;
#endif
#ifndef MUTANT_SAME_GENERATION
	wgen[s] = 0;
#endif
	skip
}

/* mrmon_watch_clear(), under ctx->lock, from mrmon_watches_clear(): clear
 * the word (store-release), push {cookie, slot, gen} (mrmon_event_push: a
 * full ring sets overflow_unreported and the slot waits in limbo), unlink
 * the watch from the tree and its slot (slot_watch NULL).  The slot stays
 * off the free stack until read() hands the event over. */
inline mrmon_watch_clear(s)
{
	/* @code kmod/mrmon_watch.c:mrmon_watch_clear:305-314 */
	/* @code kmod/mrmon_notify.c:mrmon_event_push:89-100 */
	/* @code kmod/mrmon_watch.c:mrmon_watches_clear:369-375 */
	assert(wused[s]);
	word[s] = word[s] & ~VALID;
	kpages[s] = 0;		/* ghosts: it vouches for nothing now */
	karmed[s] = 0;
	if
	:: qlen < QLEN ->
		qcookie[qlen] = wcookie[s];
		qslot[qlen] = s;
		qgen[qlen] = wgen[s];
		qlen++
	:: else -> overflow = 1
#ifndef MUTANT_SLOT_REUSE_EARLY
		; limbo[s] = 1
#endif
	fi;
	wused[s] = 0;
	wcookie[s] = 0
#ifdef MUTANT_SLOT_REUSE_EARLY
	; mrmon_slot_put(s)
#endif
}

/* mrmon_mn_start(), the descriptor's invalidate_range_start, in the
 * invalidating thread, under ctx->lock: the event passes the filter (a
 * permission-only change is skipped before the lock and changes no
 * pages: not modelled), the invalidation records its range in flight
 * (one range: the range), then every watch in the tree
 * (one range: all of them) is cleared and unlinked. */
inline mrmon_mn_start(s)
{
	/* @code kmod/mrmon_notify.c:mrmon_mn_start:160-169 */
	/* @code kmod/mrmon_notify.c:mrmon_active_add:110-118 */
	/* @code kmod/mrmon_watch.c:mrmon_watches_clear:357-358 */
	atomic {
		inflight = 1;
		for (s : 0 .. NSLOT - 1) {
			if
#ifndef MUTANT_DEFERRED_INVALIDATE
			:: wused[s] -> mrmon_watch_clear(s)
#else
			/* ctx->lock busy: a work item clears it later, or now */
			:: wused[s] -> mrmon_watch_clear(s)
			:: wused[s] -> deferred = deferred | (1 << s)
#endif
			:: else
			fi
		}
		s = 0
	}
}

/* mrmon_mn_end(), invalidate_range_end: the change is done; its range
 * is removed from those in flight, under ctx->lock. */
inline mrmon_mn_end()
{
	/* @code kmod/mrmon_notify.c:mrmon_mn_end:193-195 */
	/* @code kmod/mrmon_notify.c:mrmon_active_remove:133-140 */
	inflight = 0
}

/* mrmon_watch_one(), and the library's kernel_watch() around it:
 * WATCH's lock section: if an invalidation in flight overlaps the range
 * (mrmon_collides: one range, so any in flight), "not armed": slot 0,
 * expected 0; else a free slot (the stack's top), a new generation, the
 * valid word (store-release) and the insert into the tree, one step under
 * ctx->lock.  kernel_watch() yields and asks again until armed: a refusal
 * changes nothing shared, so the model lets the retry wait for the
 * invalidation's end (!inflight) instead of spinning (the same behaviours,
 * without the stutter cycle).  The allocation of the watch before the
 * lock touches nothing shared; region_alloc's PENDING is folded into the
 * first step (a stale reader backs off a FREE region as it does a
 * PENDING one). */
inline mrmon_watch_one(r, s, e)
{
	/* @code lib/cache/cache.c:region_alloc:143-150 */
	rstate[r] = R_PENDING;
	do
	:: true ->
#ifdef MUTANT_WATCH_SPLIT_LOCK
		/* the check in one lock section, the insert in another */
		/* @code kmod/mrmon_watch.c:mrmon_watch_one:241-247 */
		e = (inflight -> 0 : 1);
		if
		:: e != 0 ->
#endif
		/* @code kmod/mrmon_watch.c:mrmon_watch_one:241-247 */
		/* @code kmod/mrmon_watch.c:mrmon_collides:159-162 */
		/* @code kmod/mrmon_watch.c:mrmon_watch_one:249-260 */
		atomic {
			s = 0; e = 0;
#if !defined(MUTANT_WATCH_NO_ACTIVE_CHECK) && !defined(MUTANT_WATCH_SPLIT_LOCK)
			if
			:: inflight -> s = NSLOT + 1	/* collides */
			:: else
			fi;
#endif
			/* The code pops the slot freed last (a stack); the
			 * model takes the lowest free slot.  Both reuse a
			 * just-freed slot at once whenever it is the only free
			 * one, the case the generation exists for. */
			do
			:: s < NSLOT && !sfree[s] -> s++
			:: else -> break
			od;
			if
			:: s == NSLOT + 1 -> s = 0	/* not armed: slot 0, expected 0 */
			:: s == NSLOT -> s = NONE	/* -ENOSPC: every slot holds a
							 * watch or waits for its event
							 * to be read */
			:: s < NSLOT ->
				sfree[s] = 0;
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
				e = word[s];
				/* K's ghosts: the word vouches for the pages
				 * mapped now; any change after this clears it */
				karmed[s] = 1;
				kpages[s] = mapped
			fi
		};
#ifdef MUTANT_WATCH_SPLIT_LOCK
		:: else -> s = 0; e = 0
		fi;
#endif
		/* @code lib/monitor/kernel.c:kernel_watch:250-255 */
		if
		:: e != 0 || s == NONE -> break
#ifdef MUTANT_TRUST_NOT_ARMED
		:: else -> break	/* slot 0, expected 0: taken as armed */
#else
		:: else -> !inflight	/* sched_yield(), then WATCH again */
#endif
		fi
	od
}

/* mrmon_unwatch_one(): under ctx->lock, -ESTALE unless the slot holds
 * that watch (slot_watch set, its generation); else the word cleared
 * (store-release), the watch unlinked from the tree and its slot, the
 * slot put back; the watch is freed after the unlock (nothing reaches it
 * any more).  MUTANT_UNWATCH_REMOVE_FIRST unlinks in one lock section and
 * clears the word in the next (mrmon before issue 13);
 * MUTANT_UNWATCH_STALE_FREE has no check: it puts back the slot of a
 * watch an invalidation unlinked, whose event is still queued. */
inline mrmon_unwatch_one(s, e)
{
#ifndef MUTANT_UNWATCH_REMOVE_FIRST
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:281-290 */
	/* @code kmod/mrmon_watch.c:mrmon_watch_unlink:181-182 */
	atomic {
		if
		:: wused[s] && WORD(wgen[s]) == e ->
			word[s] = word[s] & ~VALID; karmed[s] = 0; kpages[s] = 0;
			wused[s] = 0; wcookie[s] = 0;
			mrmon_slot_put(s)
#ifdef MUTANT_UNWATCH_STALE_FREE
		:: !wused[s] && !sfree[s] && WORD(wgen[s]) == e ->
			mrmon_slot_put(s)
#endif
		:: else		/* -ESTALE */
		fi
	}
#else
	/* @code kmod/mrmon_watch.c:mrmon_watch_unlink:181-182 */
	atomic {
		if
		:: wused[s] && WORD(wgen[s]) == e ->
			wused[s] = 0; wcookie[s] = 0; rmfirst = s
		:: else
		fi
	};
	/* @code kmod/mrmon_watch.c:mrmon_unwatch_one:288-290 */
	atomic {
		if
		:: rmfirst == s ->
			word[s] = word[s] & ~VALID; karmed[s] = 0; kpages[s] = 0;
			mrmon_slot_put(s);
			rmfirst = NONE
		:: else
		fi
	}
#endif
}

/* ================ the unmapping thread (mm/) ================ */

proctype unmapper()
{
	byte n, s;
	for (n : 1 .. NUNMAP) {
		/* invalidate_range_start: the descriptor's notifier is called */
		/* @linux mm/mmu_notifier.c:__mmu_notifier_invalidate_range_start */
		mrmon_mn_start(s);
		/* the page tables change (unmap_page_range, a COW copy, a
		 * split, a collapse): other pages, or for a split the same
		 * ones; the word was cleared all the same */
		/* @linux mm/memory.c:unmap_page_range */
		atomic {
			if
			:: skip			/* a split */
			:: nver++; mapped = nver
			fi;
			check_library();
			check_kernel()
		}
		/* invalidate_range_end */
		/* @linux mm/mmu_notifier.c:__mmu_notifier_invalidate_range_end */
		atomic { mrmon_mn_end() }
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
		:: wused[s] -> mrmon_watch_clear(s)
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
	/* @code lib/cache/cache.c:mrc_cache_lock:78-79 */
	atomic { lock == NONE -> lock = me }
}

inline cache_unlock(me)
{
	/* @code lib/cache/cache.c:mrc_cache_unlock:107-108 */
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
	/* @code lib/cache/cache.c:region_reclaim:295-297 */
	/* @code lib/cache/cache.c:reclaim_claim:237-237 */
#ifdef MUTANT_RECLAIM_MISSES_SLOT
	won = 1;
#else
	won = !HELD_BY_SLOT(r);
#endif
	/* @code lib/cache/cache.c:reclaim_claim:238-247 */
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
		/* @code lib/cache/cache.c:reclaim_flush:272-283 */
#ifdef EARLY_UNWATCH
		if
		:: runw[r] -> d_step { runw[r] = 0; rslot[r] = NONE; rexp[r] = 0 }
		:: else -> kernel_unwatch(r, won); d_step { rslot[r] = NONE; rexp[r] = 0 }
		fi
#else
		kernel_unwatch(r, won);
		d_step { rslot[r] = NONE; rexp[r] = 0 }	/* region_free() */
#endif
	:: else
	fi
}

/* region_unref(): a CAS decrement; whoever leaves a DEAD region at zero
 * takes cache->lock (never held by its caller) and tries
 * region_reclaim(). */
inline region_unref(me, r, won)
{
	/* @code lib/cache/cache.c:region_unref:350-357 */
	atomic {
		assert(refs[r] > 0);
		refs[r]--;
		won = (refs[r] == 0 && rstate[r] == R_DEAD)
	};
	if
	:: won ->
		/* @code lib/cache/cache.c:region_release_dead:307-309 */
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
	/* @code lib/cache/cache.c:region_kill:378-380 */
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
		kernel_unwatch(r, won);
		runw[r] = 1
#else
	:: else
#endif
	fi
}

/* kernel_unwatch_many() for one region's watch, from reclaim_flush() or
 * region_discard(): forget the slot if it is still ours (km->slots[].w:
 * a newer watch may hold it by now), then load the word (acquire) and
 * UNWATCH only if it still holds the expected value: otherwise an
 * invalidation has unlinked the watch already (UNWATCH would say
 * -ESTALE).  The load and the ioctl are steps of their own: an
 * invalidation may come in between (and then UNWATCH says -ESTALE).  The
 * caller drops region->watch afterwards (rslot NONE).  m: a scratch bit,
 * 0 on return.  Under cache->lock. */
inline kernel_unwatch(r, m)
{
	/* @code lib/monitor/kernel.c:kernel_unwatch_many:299-305 */
	atomic {
		if
		:: kown[rslot[r]] == r -> kown[rslot[r]] = NONE; kgens[rslot[r]] = 0
		:: else
		fi;
		m = (word[rslot[r]] == rexp[r])
	};
	if
	:: m ->
		/* @code lib/monitor/kernel.c:kernel_unwatch_many:306-313 */
		/* @code lib/monitor/kernel.c:kmon_unwatch_entries:272-277 */
		mrmon_unwatch_one(rslot[r], rexp[r]);
		m = 0
	:: else
	fi
}

/* kill_if_changed() for the one indexed region, from mrc_cache_event() or
 * mrc_cache_rescan(): its word no longer holds the expected value: kill
 * it (no monitor re-arms a watch since ABI 3). */
inline kill_if_changed(r, won)
{
	/* @code lib/cache/invalidate.c:kill_if_changed:58-61 */
	if
	:: r != NONE && rstate[r] == R_LIVE && index == r &&
	   word[rslot[r]] != rexp[r] -> region_kill(r, won)
	:: else
	fi
}

/* mrc_cache_drain_locked() -> kernel_drain(): read() the ring
 * (mrmon_read -> mrmon_events_copy, one reader at a time: an unreported
 * overflow first, as an OVERFLOW event standing for the slots in limbo
 * when it is taken, whose copy-out is followed by mrmon_limbo_release;
 * then the events, copied straight from the ring, after which
 * mrmon_ring_consume moves the head past them and puts back each one's
 * slot).  One atomic step here: between the take and the put only
 * invalidations can run (they may queue past the events being copied,
 * overflow or park slots in limbo, which the next read reports), and
 * nothing that takes a slot (WATCH is the cache's, under cache->lock,
 * which the drain holds), so putting the slots back at the take is the
 * same to every other process.  The drain reads nothing when hdr->pending
 * reads 0: the module writes it under ctx->lock with every change of the
 * ring, so that one load sees what a read() at that instant would return,
 * and the step
 * below with qlen 0 and no overflow is what either does.  Then in order:
 * OVERFLOW ->
 * mrc_cache_rescan(); an event still ours (kmon_event_live: its slot's
 * generation) -> mrc_cache_event(cookie).  Under cache->lock. */
inline kernel_drain(ev, ec, es, eg, ov, r, won)
{
	/* @code lib/cache/invalidate.c:mrc_cache_drain_locked:117-118 */
	/* @code lib/monitor/kernel.c:kernel_drain:343-343 */
	/* @code lib/monitor/kernel.c:kernel_pending:330-330 */
	/* @code kmod/mrmon_main.c:mrmon_read:322-322 */
	/* @code kmod/mrmon_notify.c:mrmon_overflow_copy:279-285 */
	/* @code kmod/mrmon_notify.c:mrmon_events_copy:326-336 */
	/* @code kmod/mrmon_notify.c:mrmon_ring_consume:242-242 */
	atomic {
		ov = overflow;
		overflow = 0;
		for (es : 0 .. NSLOT - 1) {
			if
			:: ov && limbo[es] -> limbo[es] = 0; mrmon_slot_put(es)
			:: else
			fi
		}
		es = 0;
		ev = qlen;
		if
		:: qlen > 0 ->
			ec = qcookie[0]; es = qslot[0]; eg = qgen[0];
			qcookie[0] = 0; qslot[0] = 0; qgen[0] = 0;
#ifndef MUTANT_SLOT_REUSE_EARLY
			mrmon_slot_put(es)
#else
			skip
#endif
		:: else
		fi;
		qlen = 0
	};
#ifndef MUTANT_OVERFLOW_LOST
	/* @code lib/monitor/kernel.c:kernel_drain:347-349 */
	/* @code lib/cache/invalidate.c:mrc_cache_rescan:88-92 */
	if
	:: ov -> r = index; kill_if_changed(r, won)
	:: else
	fi;
#endif
	/* @code lib/monitor/kernel.c:kernel_drain:350-352 */
	/* @code lib/monitor/kernel.c:kmon_event_live:323-323 */
	/* @code lib/cache/invalidate.c:mrc_cache_event:75-76 */
	if
	:: ev > 0 && kgens[es] == eg -> kill_if_changed(ec, won)
	:: else
	fi;
	d_step { ev = 0; ec = 0; es = 0; eg = 0; ov = 0; won = 0; r = 0 }
}

/* cache_register(): region_alloc() (free -> PENDING, keeping a stale
 * reader's count), monitor_watch() -> kernel_watch() -> WATCH,
 * mrc_index_set() (pending regions are in the index), backend_reg(), the
 * re-check region_intact(); on a mismatch region_discard() and -ESTALE;
 * else publish: fetch_add(1 - PENDING) gives the caller its reference.
 * Under cache->lock. */
inline cache_register(r, s, e, ok, got)
{
	/* @code lib/cache/cache.c:cache_register:773-773 */
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
	/* @code lib/cache/cache.c:cache_register:765-765 */
	/* @code lib/monitor/kernel.c:kernel_watch:246-250 */
	mrmon_watch_one(r, s, e);
	if
	:: s == NONE ->
		/* -ENOSPC: region_discard() with no watch; the get fails
		 * (cache_get_slow gives up: not -ESTALE) */
		/* @code lib/cache/cache.c:cache_register:778-780 */
		d_step { rstate[r] = R_FREE; rpages[r] = 0; got = GET_FAILED; s = 0 }
	:: else ->
	/* kernel_watch() keeps what WATCH returned; the region enters the
	 * index, pending (a hit there backs off) */
	/* @code lib/monitor/kernel.c:kernel_watch:257-260 */
	/* @code lib/cache/cache.c:cache_register:782-783 */
	atomic {	/* not d_step: WATCH's retry loop breaks to here */
		rslot[r] = s; rexp[r] = e; kgens[s] = e >> 1; kown[s] = r;
		index = r
	};
#ifndef MUTANT_REG_BEFORE_WATCH
	/* @code lib/cache/cache.c:cache_register:765-765 */
	rpages[r] = mapped;		/* backend_reg() */
#endif
#ifdef MUTANT_NO_RECHECK
	/* the get returns here: its deciding step */
	atomic { GET_RETURNS(r); ok = 1; rstate[r] = R_LIVE; refs[r]++ };
#else
	/* region_intact(), the re-check, and the publish in one step: in
	 * between, a hit backs off the pending region as it would a live one
	 * whose word was cleared */
	/* @code lib/cache/cache.c:cache_register:806-816 */
	/* @code lib/cache/cache.c:cache_register:763-767 */
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
		/* @code lib/cache/cache.c:region_discard:425-430 */
		d_step { index = NONE; rpages[r] = 0 };
		/* @code lib/cache/cache.c:region_discard:431-432 */
		kernel_unwatch(r, ok);
		d_step { rslot[r] = NONE; rexp[r] = 0 };
		/* @code lib/cache/cache.c:region_discard:429-434 */
		rstate[r] = R_FREE
	fi
	fi
}

/* cache_get_slow(): cache->lock, drain, then until it has a region: look
 * again; a region whose word changed is killed (its event not read yet);
 * an intact one was registered by another thread meanwhile: reference it;
 * else cache_register(), again on -ESTALE. */
inline cache_get_slow(me, got, r, s, e, ok, won, ev, ec, es, eg, ov)
{
	/* @code lib/cache/cache.c:cache_get_slow:853-854 */
	cache_lock(me);
	kernel_drain(ev, ec, es, eg, ov, r, won);
	do
	:: got == NONE ->
		/* @code lib/cache/cache.c:cache_get_slow:858-864 */
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
			/* @code lib/cache/cache.c:cache_get_slow:866-872 */
			atomic { refs[r]++; got = r }
		:: !ok && r != NONE ->
			/* @code lib/cache/cache.c:cache_get_slow:860-863 */
			region_kill(r, won);
			/* @code lib/cache/cache.c:cache_get_slow:874-874 */
			cache_register(r, s, e, ok, got)
		:: !ok && r == NONE ->
			/* @code lib/cache/cache.c:cache_get_slow:874-874 */
			cache_register(r, s, e, ok, got)
		fi
	:: else -> break
	od;
	/* @code lib/cache/cache.c:cache_get_slow:874-874 */
	cache_unlock(me)
}

/* slot_clear(): clear this thread's slot if it still holds r (a
 * compare-and-swap: a put by another thread may have cleared it, taking it
 * for a hold), then (a step of its own) read the region's word: DEAD with
 * no reference means a reclaim may have left it to this thread, which then
 * takes cache->lock and tries region_reclaim().  cl: the slot held r. */
inline slot_clear(me, r, won, cl)
{
	/* @code lib/cache/cache.c:slot_clear:321-323 */
	atomic {
		cl = (hslot[me] == r);
		if
		:: cl -> hslot[me] = NONE
		:: else
		fi
	};
	if
	:: cl ->
		/* @code lib/cache/cache.c:slot_clear:324-325 */
		won = (rstate[r] == R_DEAD && refs[r] == 0);
		if
		:: won ->
			/* @code lib/cache/cache.c:region_release_dead:307-309 */
			cache_lock(me);
			region_reclaim(r, won);
			cache_unlock(me)
		:: else
		fi
	:: else
	fi;
	won = 0
}

/* region_unref() as a put calls it, with its slow path: drop a reference
 * if there is one; with none, mrc_threads_clear_any() clears a slot of any
 * thread that holds r (the put of a region another thread got).  Holds are
 * interchangeable: what matters is that each put removes one and that
 * every hit's slot or reference stands for one.  The C code scans the
 * blocks in order, a load and a compare-and-swap per slot, so any slot
 * holding r may be the one it clears: the model picks.  With neither, the
 * put is of a region nobody holds (-EINVAL): the protocol must never get
 * there. */
inline unref_any(me, r, won)
{
	/* @code lib/cache/cache.c:region_unref:350-357 */
	/* @code lib/cache/cache.c:region_unref_slow:335-337 */
	atomic {
		if
		:: refs[r] > 0 -> refs[r]--
		:: refs[r] == 0 && hslot[0] == r -> hslot[0] = NONE
		:: refs[r] == 0 && hslot[NT - 1] == r -> hslot[NT - 1] = NONE
		:: else -> assert(false)	/* a put of a region nobody holds */
		fi
	};
	won = (rstate[r] == R_DEAD && refs[r] == 0);
	if
	:: won ->
		/* @code lib/cache/cache.c:region_release_dead:307-309 */
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
	byte n, r, old, got, s, e, w, ev, ec, es, eg;
	bit ok, won, ov, good, viaslot, cl;
	for (n : 1 .. (me == 0 -> NGET0 : NGET1)) {
		/* mrcache_get() -> cache_hit(): mrc_index_lookup(), lock
		 * free, may be stale */
		/* @code lib/cache/cache.c:cache_get:909-909 */
		/* @code lib/cache/cache.c:cache_hit:637-639 */
		got = NONE;
		r = index;
		if
		/* A thread's one slot here may still hold a region it handed
		 * to another thread to put: then this get misses (the C code
		 * would publish in another of its six slots, or take a
		 * reference in try_hit_ref). */
		:: r != NONE && hslot[me] == NONE ->
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
			/* @code lib/cache/cache.c:slot_publish:593-596 */
			hslot[me] = r;
#endif
			/* @code lib/cache/cache.c:try_hit:616-616 */
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
				/* @code lib/cache/cache.c:hit_valid:557-563 */
				/* @code lib/cache/region.h:region_intact:124-125 */
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
				/* @code lib/cache/cache.c:try_hit:625-625 */
				slot_clear(me, r, won, cl);
				/* A put by another thread cleared the slot:
				 * the hold it meant is still held somewhere,
				 * and this thread releases it
				 * (MUTANT_LOST_FOREIGN_CLEAR: it does not, and
				 * that slot or reference is never let go). */
#ifndef MUTANT_LOST_FOREIGN_CLEAR
				if
				:: !cl ->
					/* @code lib/cache/cache.c:try_hit:626-626 */
					unref_any(me, r, won)
				:: else
				fi;
#endif
				cl = 0
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
				/* @code lib/cache/cache.c:try_hit_ref:580-580 */
				region_unref(me, r, won)
			:: else -> gheld[me] = r
			fi
#endif
		:: else
		fi;
		d_step { old = 0; e = 0; w = 0; good = 0; ok = 0 };
		if
		:: got == NONE ->
			/* @code lib/cache/cache.c:cache_get:911-911 */
			cache_get_slow(me, got, r, s, e, ok, won, ev, ec, es, eg, ov);
			if
			:: got == GET_FAILED -> got = NONE	/* mrcache_get() fails */
			:: else -> gheld[me] = got
			fi
		:: else
		fi;
		/* the application uses got, then mrcache_put(): region_unref(),
		 * then drain if events_waiting() and the lock is free */
		d_step { r = 0; old = 0; s = 0; e = 0; ok = 0 };
		/* @code lib/cache/cache.c:mrcache_put:1057-1057 */
		gheld[me] = NONE;
		if
		:: got == NONE		/* the get failed: nothing to put */
		:: got != NONE && viaslot ->
			/* @code lib/cache/cache.c:put_slot:1035-1037 */
			slot_clear(me, got, won, cl);
			if
			:: !cl ->
				/* @code lib/cache/cache.c:mrcache_put:1057-1057 */
				unref_any(me, got, won)
			:: else
			fi;
			cl = 0
		:: got != NONE && !viaslot ->
			/* @code lib/cache/cache.c:mrcache_put:1057-1057 */
			unref_any(me, got, won)
		:: got != NONE ->
			/* handed to another thread, which puts it: no slot of
			 * that thread's holds it (or one holds it only for a
			 * hit in flight, which unref_any may pick) */
			/* @code lib/cache/cache.c:mrcache_put:1057-1057 */
			unref_any(me, got, won)
		fi;
		/* @code lib/cache/cache.c:mrcache_put:1059-1062 */
		atomic {
			ok = ((qlen > 0 || overflow) && lock == NONE);
			if
			:: ok -> lock = me
			:: else
			fi
		};
		if
		:: ok ->
			kernel_drain(ev, ec, es, eg, ov, r, won);
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
	byte r, ev, ec, es, eg;
	bit won, ov;
	/* @code lib/cache/cache.c:whole_cache_call:1157-1161 */
	cache_lock(NT);
	kernel_drain(ev, ec, es, eg, ov, r, won);
	r = index;
	if
	:: r != NONE && rstate[r] == R_LIVE && refs[r] == 0 && !HELD_BY_SLOT(r) ->
		/* @code lib/cache/cache.c:flush_locked:1141-1142 */
		/* @code lib/cache/cache.c:region_evictable:444-445 */
		region_kill(r, won)
	:: true
	fi;
	cache_unlock(NT);
	r = 0;

	done == NDONE;
	/* @code lib/cache/cache.c:whole_cache_call:1157-1161 */
	cache_lock(NT);
	kernel_drain(ev, ec, es, eg, ov, r, won);
	/* No leaks: every region struct is free, or cached validly with no
	 * reference left; every slot holds the watch (in the tree) of
	 * exactly one region, or is free: none waits for an event or in
	 * limbo; no event, overflow or invalidation is left. */
	assert(!inflight && qlen == 0 && !overflow);
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
		assert(wused[ev] != sfree[ev] && !limbo[ev])
	}
	cache_unlock(NT)
}

init
{
	byte i;
	atomic {
		for (i : 0 .. NREG - 1) { rslot[i] = NONE }
		for (i : 0 .. NSLOT - 1) { sfree[i] = 1; kown[i] = NONE }
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

