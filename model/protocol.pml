/* SPDX-License-Identifier: MIT */
/*
 * protocol.pml - the invalidation protocol between the mrmon kernel module
 * (kmod/), the cache (lib/cache.c, lib/cache_invalidate.c,
 * lib/monitor_kernel.c) and the application, as a Promela model for Spin.
 * docs/protocol.md explains it; model/verify.sh checks it
 * (make check-model).
 *
 * Every step names the function it stands for in the code.  A change to
 * the protocol in the code changes this file in the same commit.
 *
 * Abstractions:
 *  - One address range.  Every watch and every region covers it, so every
 *    unmap hits every watched slot, and a hit's range/access check
 *    (region_covers) always passes.
 *  - "Pages" are the version of the mapping at that address.  The unmapper
 *    replaces the mapping (munmap + mmap, or mmap MAP_FIXED over it); each
 *    replacement maps new pages, version + 1.  A registration pins the
 *    version mapped when the backend registers it.
 *  - Only the kernel monitor.  The unmapper's changes are UNMAPs (the
 *    word is cleared in invalidate_range_start) or, with -DPFN_CLEAR,
 *    CLEARs decided by mrmon_pfn.c (the word is cleared at range end,
 *    after the page change, before the call returns).  The user-side
 *    monitors (uffd, hooks) and the bpf monitor are not modelled.
 *  - An atomic read-modify-write of the code is one atomic step; every
 *    other shared access is a step of its own (sequential consistency: the
 *    code's acquire/release pairs are what make that assumption hold).
 *
 * Variants, built by model/verify.sh with -D<name>:
 *  must fail (bugs seen in the field)
 *   MUTANT_REG_BEFORE_WATCH     register, then watch (libfabric's order)
 *   MUTANT_DEFERRED_INVALIDATE  the word is cleared by a worker, possibly
 *                               after munmap returned (kdreg2, Dec 2025)
 *   MUTANT_EARLY_WORD_CHECK     the hit reads the word before the lookup's
 *                               reference that it guards
 *   MUTANT_WATCH_NO_WAIT        WATCH returns during an invalidation in
 *                               progress (no mmu_interval_read_begin)
 *   MUTANT_OVERFLOW_LOST        an event-queue overflow is dropped, with
 *                               no rescan: a leak, caught by the liveness
 *                               property and by the end-state check
 *   MUTANT_SAME_GENERATION      a reused slot keeps its generation: fails
 *                               with EARLY_UNWATCH; harmless as built
 *  tolerated (must pass; docs/protocol.md says why)
 *   MUTANT_SAME_GENERATION      alone (a slot is freed only at reclaim)
 *   MUTANT_NO_RECHECK           no re-check of the word after registering
 *  other switches
 *   PFN_CLEAR                   the unmapper's changes are PFN-checked CLEARs
 *   WEAK_GET                    check the weaker guarantee (GET_RETURNS)
 *   EARLY_UNWATCH               a design variant: region_kill() frees the
 *                               slot at once (word cleared, notifier
 *                               removed) even if the region is still held;
 *                               safe only with a new generation per watch
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
#define NUNMAP	2	/* mapping replacements by the unmapping thread */
#endif
#define NREG	3	/* region structs in the type-stable slab */
#define NSLOT	2	/* mrmon slots */
#define QLEN	1	/* mrmon event ring: one entry, so it overflows */

#define NONE	255
#define VALID	1			/* MRC_WORD_VALID */
#define WORD(g)	(((g) << 1) | VALID)	/* MRC_WORD(gen) */

/* refstate's flags (lib/region.h); the count is refs[]. */
#define R_FREE		0	/* DEAD|RECLAIMED: in the free list */
#define R_PENDING	1	/* PENDING: being registered by a miss */
#define R_LIVE		2	/* no flag: in the index, handed out */
#define R_DEAD		3	/* DEAD: out of the index for good */

/* ---- the address space ---- */
byte mapped = 1;	/* version of the pages mapped at the address */
bit invalidating;	/* mn_itree_inv_start() .. mn_itree_inv_end() */

/* ---- kmod: struct mrmon_ctx (words, ring: ctx->lock) ---- */
byte word[NSLOT];	/* ctx->words[]: gen << 1 | valid, read-only in user space */
byte sgen[NSLOT];	/* slot->gen */
byte next_gen;		/* ctx->next_gen */
bit sused[NSLOT];	/* slot->in_use */
bit interval[NSLOT];	/* slot->sub is inserted */
byte scookie[NSLOT];	/* slot->cookie: the region */
byte qcookie[QLEN];
byte qslot[QLEN];
byte qgen[QLEN];
byte qlen;		/* ctx->ring_count */
bit overflow;		/* ctx->overflow_unreported */
#ifdef MUTANT_DEFERRED_INVALIDATE
byte deferred;		/* slots whose word a work item still has to clear */
#endif
#ifdef PFN_CLEAR
byte inflight;		/* slots with a CLEAR in flight (slot->clear_inflight) */
#endif

/* ---- lib: struct mrcache, struct mrcache_region ---- */
byte lock = NONE;	/* cache->lock: the owner's thread number */
byte index = NONE;	/* the index entry covering the address */
byte rstate[NREG];	/* refstate flags */
byte refs[NREG];	/* refstate count */
byte rpages[NREG];	/* what region->reg pins; 0: not registered */
byte rslot[NREG];	/* region->watch.token; NONE: not watched */
byte rexp[NREG];	/* region->watch.expected */
byte kgens[NSLOT];	/* kernel_monitor->gens[]: gen of our live watch */
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

/*
 * The property of a get.  It is evaluated in the same atomic step as the
 * get's last read of shared memory that decides what it returns (the word
 * check, or in a variant without one the read that decides instead).
 * An unmap after that step is an unmap after the get returned: the region
 * stays pinned until put and is never handed out again.
 */
#ifndef WEAK_GET
#define GET_RETURNS(r)	assert(rpages[r] == mapped)
#else
/* The weaker guarantee, all a PFN-checked CLEAR gives: the registration
 * pins the pages mapped now, or the ones the unmapping call in progress
 * is replacing; never pages an unmapping call that returned replaced. */
bit incall;		/* an unmapping call is in progress */
#define GET_RETURNS(r)	assert(rpages[r] == mapped || (incall && rpages[r] + 1 == mapped))
#endif

/*
 * The protocol's invariant: a word that holds its watch's expected value
 * means the registration pins the mapped pages.  Only a page change can
 * break it for a registered region (a word turns valid only in WATCH, before
 * the backend registers; the re-check covers the variants that register
 * first), so the unmapper checks it right after each change.
 */
inline check_invariant()
{
	assert(!(rpages[0] != 0 && WATCHED(0) && word[rslot[0]] == rexp[0] && rpages[0] != mapped));
	assert(!(rpages[1] != 0 && WATCHED(1) && word[rslot[1]] == rexp[1] && rpages[1] != mapped));
	assert(!(rpages[2] != 0 && WATCHED(2) && word[rslot[2]] == rexp[2] && rpages[2] != mapped))
}

/* ====================== kernel: kmod/ ====================== */

/* mrmon_invalidate() -> mrmon_slot_invalidate() ->
 * mrmon_word_clear_locked(), in the unmapping thread before the page tables
 * change, under ctx->lock: if the word still holds this watch, clear it
 * and push {cookie, slot, gen} (mrmon_event_push: a full ring sets
 * overflow_unreported instead). */
inline mrmon_invalidate(s)
{
	atomic {
		if
		:: word[s] == WORD(sgen[s]) ->
			word[s] = word[s] & ~VALID;
			if
			:: qlen < QLEN ->
				qcookie[qlen] = scookie[s];
				qslot[qlen] = s;
				qgen[qlen] = sgen[s];
				qlen++
			:: else -> overflow = 1
			fi
		:: else
		fi
	}
}

/* mrmon_watch_one(): take the free slot, give it a new generation
 * (++ctx->next_gen) and a valid word, then mmu_interval_notifier_insert()
 * (during an invalidation the insert is deferred: the walk in progress
 * does not see it), then mmu_interval_read_begin(): sleep until no
 * invalidation of the range is in progress.  Returns {slot, expected}. */
inline mrmon_watch_one(r, s, e)
{
	atomic {
		s = 0;
		do
		:: s < NSLOT && sused[s] -> s++
		:: else -> break
		od;
		assert(s < NSLOT);	/* bound: NSLOT slots are enough */
		sused[s] = 1;
#ifndef MUTANT_SAME_GENERATION
		next_gen++;
		sgen[s] = next_gen;
#endif
		scookie[s] = r;
		word[s] = WORD(sgen[s]);
		e = word[s]
	};
	interval[s] = 1;
#ifndef MUTANT_WATCH_NO_WAIT
	(!invalidating)
#endif
}

/* mrmon_unwatch_one(): mmu_interval_notifier_remove() waits for an
 * invalidation in progress, so no callback touches the slot after it; then
 * the word is cleared and the slot goes back to the free list. */
inline mrmon_unwatch_one(s)
{
	atomic { !invalidating -> interval[s] = 0 };
	atomic {
		word[s] = word[s] & ~VALID;
#ifdef PFN_CLEAR
		inflight = inflight & ~(1 << s);	/* mrmon_slot_suspect_drop() */
#endif
		sused[s] = 0
	}
}

/* ================ the unmapping thread (mm/) ================ */

proctype unmapper()
{
	byte n, s, notify;
	for (n : 1 .. NUNMAP) {
		/* munmap(): mn_itree_inv_start() walks the intervals
		 * inserted now */
		atomic {
#ifdef WEAK_GET
			incall = 1;
#endif
			invalidating = 1;
			notify = 0;
			for (s : 0 .. NSLOT - 1) {
				if
				:: interval[s] -> notify = notify | (1 << s)
				:: else
				fi
			}
			s = 0
		}
		for (s : 0 .. NSLOT - 1) {
			if
			:: notify & (1 << s) ->
#if defined(PFN_CLEAR)
				/* MMU_NOTIFY_CLEAR: mrmon_pfn_clear_begin()
				 * records the PFNs of a valid slot; no clear */
				atomic {
					if
					:: word[s] == WORD(sgen[s]) ->
						inflight = inflight | (1 << s)
					:: else
					fi
				}
#elif defined(MUTANT_DEFERRED_INVALIDATE)
				/* ctx lock busy: a work item clears it later */
				if
				:: mrmon_invalidate(s)
				:: deferred = deferred | (1 << s)
				fi
#else
				mrmon_invalidate(s)
#endif
			:: else
			fi
		}
		/* unmap_page_range(); the next mmap maps new pages */
#ifndef WEAK_GET
		atomic { mapped++; check_invariant() };
#else
		mapped++;
#endif
		/* mn_itree_inv_end(): deferred inserts and removes happen,
		 * mmu_interval_read_begin() sleepers wake */
		invalidating = 0;
#ifdef PFN_CLEAR
		/* mrmon_hook_range_end() -> mrmon_pfn_clear_end(): the PFNs
		 * differ (new pages), so clear the word of each slot still in
		 * flight */
		for (s : 0 .. NSLOT - 1) {
			atomic {
				if
				:: inflight & (1 << s) ->
					inflight = inflight & ~(1 << s);
					mrmon_invalidate(s)
				:: else
				fi
			}
		}
#endif
		/* munmap() returns */
#ifdef WEAK_GET
		atomic { incall = 0; check_invariant() }
#else
		skip
#endif
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
	   mrmon_invalidate(s)
	:: atomic { done == NT + 1 && deferred == 0 } -> break
	od;
	done++
}
#endif

/* ====================== user space: lib/ ====================== */

inline cache_lock(me)
{
	atomic { lock == NONE -> lock = me }
}

inline cache_unlock(me)
{
	assert(lock == me);
	lock = NONE
}

/* kernel_unwatch(): MRMON_IOC_UNWATCH, and forget the generation. */
inline kernel_unwatch(s)
{
	mrmon_unwatch_one(s);
	kgens[s] = 0
}

/* region_reclaim(): win the CAS DEAD|0 -> DEAD|RECLAIMED, then
 * backend_dereg(), monitor_unwatch(), region_free().  Under cache->lock. */
inline region_reclaim(r, won)
{
	atomic {
		if
		:: rstate[r] == R_DEAD && refs[r] == 0 ->
			rstate[r] = R_FREE; won = 1;
			rpages[r] = 0		/* backend_dereg() */
		:: else -> won = 0
		fi
	};
	if
	:: won ->
#ifdef EARLY_UNWATCH
		if
		:: runw[r] -> runw[r] = 0
		:: else -> kernel_unwatch(rslot[r])
		fi;
#else
		kernel_unwatch(rslot[r]);	/* monitor_unwatch() */
#endif
		rslot[r] = NONE			/* region_free() */
	:: else
	fi
}

/* region_unref(): fetch_sub; whoever leaves a DEAD region at zero takes
 * cache->lock (never held by its caller) and tries region_reclaim(). */
inline region_unref(me, r, won)
{
	atomic {
		assert(refs[r] > 0);
		refs[r]--;
		won = (refs[r] == 0 && rstate[r] == R_DEAD)
	};
	if
	:: won ->
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
	if
	:: index == r -> index = NONE
	:: else
	fi;
	atomic {
		assert(rstate[r] == R_LIVE);
		rstate[r] = R_DEAD;
		won = (refs[r] == 0)
	};
	if
	:: won -> region_reclaim(r, won)
#ifdef EARLY_UNWATCH
	:: else ->	/* the variant: UNWATCH now, word cleared first */
		atomic {
			!invalidating ->
			word[rslot[r]] = word[rslot[r]] & ~VALID;
			interval[rslot[r]] = 0;
			sused[rslot[r]] = 0;
			kgens[rslot[r]] = 0;
			runw[r] = 1
		}
#else
	:: else
#endif
	fi
}

/* kill_if_changed() for the one indexed region: its word no longer holds
 * the expected value.  From mrc_cache_event() and mrc_cache_rescan(). */
inline kill_if_changed(r, won)
{
	if
	:: r != NONE && rstate[r] == R_LIVE && index == r &&
	   word[rslot[r]] != rexp[r] -> region_kill(r, won)
	:: else
	fi
}

/* mrc_cache_drain_locked() -> kernel_drain(): read() the ring
 * (mrmon_event_pop: an unreported overflow comes first as an OVERFLOW
 * event -> mrc_cache_rescan()); an event whose generation is that of our
 * live watch in its slot goes to mrc_cache_event(cookie).  Under
 * cache->lock. */
inline kernel_drain(ev, ec, es, eg, ov, r, won)
{
	atomic {
		ov = overflow;
		overflow = 0;
		ev = qlen;
		if
		:: qlen > 0 -> ec = qcookie[0]; es = qslot[0]; eg = qgen[0]
		:: else
		fi;
		qlen = 0
	};
#ifndef MUTANT_OVERFLOW_LOST
	if
	:: ov -> r = index; kill_if_changed(r, won)	/* mrc_cache_rescan() */
	:: else
	fi;
#endif
	if
	:: ev > 0 && kgens[es] == eg -> kill_if_changed(ec, won)
	:: else
	fi;
	d_step { ev = 0; ec = 0; es = 0; eg = 0; ov = 0; won = 0; r = 0 }
}

/* cache_register(): region_alloc() (free -> PENDING, keeping a stale
 * reader's count), monitor_watch(), mrc_index_set() (pending regions are
 * in the index), backend_reg(), the re-check region_intact(); on a
 * mismatch region_discard() and -ESTALE; else publish: fetch_add(1 -
 * PENDING) gives the caller its reference.  Under cache->lock. */
inline cache_register(r, s, e, ok, got)
{
	atomic {
		r = 0;
		do
		:: r < NREG && rstate[r] != R_FREE -> r++
		:: else -> break
		od;
		assert(r < NREG);	/* bound: NREG structs are enough */
		rstate[r] = R_PENDING
	};
#ifdef MUTANT_REG_BEFORE_WATCH
	rpages[r] = mapped;		/* backend_reg() */
	mrmon_watch_one(r, s, e);	/* monitor_watch() */
	d_step {
		rslot[r] = s; rexp[r] = e; kgens[s] = sgen[s];
		index = r		/* mrc_index_set() */
	};
#else
	mrmon_watch_one(r, s, e);	/* monitor_watch() */
	d_step {
		rslot[r] = s; rexp[r] = e; kgens[s] = sgen[s];
		index = r		/* mrc_index_set() */
	};
	rpages[r] = mapped;		/* backend_reg() */
#endif
#ifdef MUTANT_NO_RECHECK
	ok = 1;
#else
	atomic {			/* region_intact(): the re-check */
		if
		:: word[s] == e -> GET_RETURNS(r); ok = 1
		:: else -> ok = 0
		fi
	};
#endif
	if
	:: ok ->
		atomic { rstate[r] = R_LIVE; refs[r]++ };
		got = r
	:: else ->			/* region_discard() */
		index = NONE;
		rpages[r] = 0;
		kernel_unwatch(s);
		rslot[r] = NONE;
		rstate[r] = R_FREE
	fi
}

/* cache_get_slow(): cache->lock, drain, then until it has a region: look
 * again; a region whose word changed is killed (its event not read yet);
 * an intact one was registered by another thread meanwhile: reference it;
 * else cache_register(), again on -ESTALE. */
inline cache_get_slow(me, got, r, s, e, ok, won, ev, ec, es, eg, ov)
{
	cache_lock(me);
	kernel_drain(ev, ec, es, eg, ov, r, won);
	do
	:: got == NONE ->
		atomic {
			r = index;	/* mrc_index_lookup(): writers hold the lock */
			ok = (r != NONE && word[rslot[r]] == rexp[r]);	/* region_intact() */
			if
			:: ok -> GET_RETURNS(r)
			:: else
			fi
		};
		if
		:: ok -> atomic { refs[r]++; got = r }
		:: !ok && r != NONE ->
			region_kill(r, won);
			cache_register(r, s, e, ok, got)
		:: !ok && r == NONE -> cache_register(r, s, e, ok, got)
		fi
	:: else -> break
	od;
	cache_unlock(me)
}

/* An application thread: mrcache_get(), use, mrcache_put(), NGET times. */
proctype app(byte me)
{
	byte n, r, old, got, s, e, ev, ec, es, eg;
	bit ok, won, ov;
	for (n : 1 .. (me == 0 -> NGET0 : NGET1)) {
		/* mrcache_get(): mrc_index_lookup(), lock free, may be stale */
		got = NONE;
		r = index;
		if
		:: r != NONE ->
			/* try_hit() */
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
			atomic { old = rstate[r]; refs[r]++ };	/* fetch_add */
			if
			:: old == R_LIVE ->
				/* region_covers(): one range, always */
				atomic {			/* region_intact() */
					if
					:: word[rslot[r]] == rexp[r] ->
						GET_RETURNS(r); got = r
					:: else
					fi
				}
			:: else
			fi;
#endif
			if
			:: got == NONE -> region_unref(me, r, won)
			:: else
			fi
		:: else
		fi;
		if
		:: got == NONE ->
			cache_get_slow(me, got, r, s, e, ok, won, ev, ec, es, eg, ov)
		:: else
		fi;
		/* the application uses got, then mrcache_put(): region_unref(),
		 * then drain if events_waiting() and the lock is free */
		d_step { r = 0; old = 0; s = 0; e = 0; ok = 0 };
		region_unref(me, got, won);
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
		d_step { got = NONE; ok = 0 }
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
	cache_lock(NT);
	kernel_drain(ev, ec, es, eg, ov, r, won);
	r = index;
	if
	:: r != NONE && rstate[r] == R_LIVE && refs[r] == 0 ->
		region_kill(r, won)		/* flush_locked() */
	:: true
	fi;
	cache_unlock(NT);

	done == NDONE;
	cache_lock(NT);
	kernel_drain(ev, ec, es, eg, ov, r, won);
	/* No leaks: every region struct is free, or cached validly with no
	 * reference left; every slot in use is owned by exactly one region. */
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
		assert(ec == sused[ev] && interval[ev] == sused[ev])
	}
	cache_unlock(NT)
}

init
{
	byte i;
	atomic {
		for (i : 0 .. NREG - 1) { rslot[i] = NONE }
		for (i : 0 .. NT - 1) { run app(i) }
		run unmapper();
#ifdef MUTANT_DEFERRED_INVALIDATE
		run worker();
#endif
		run reclaimer()
	}
}

/* Liveness: every registration that pins pages no longer mapped is
 * eventually deregistered (pan -a -f: weak fairness). */
ltl reclaimed {
	[] ((stale(0) -> <> !stale(0)) &&
	    (stale(1) -> <> !stale(1)) &&
	    (stale(2) -> <> !stale(2)))
}
