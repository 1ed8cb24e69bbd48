/* SPDX-License-Identifier: MIT */
/*
 * fuzz-cache - random sequences of library calls interleaved with mmap,
 * munmap, mremap and madvise on a small arena, checked against a reference
 * model of what the cache may answer.
 *
 * The model knows every registration the (counting) test backend holds and
 * whether the pages under it changed since it was made.  The checks:
 *  - every region handed out covers the request with enough access and is
 *    registered with the backend;
 *  - no get ever returns a registration made before a VM operation that
 *    changed its pages (the stale-registration bug), nor one invalidated
 *    by hand;
 *  - at the end nothing is registered and nothing was deregistered twice.
 *
 * MRCACHE_FUZZ_MONITOR picks the monitor (default none: the harness then
 * calls mrcache_invalidate() after each VM operation, standing in for a
 * perfect monitor; with hooks or uffd the monitor alone must notice).
 * MRCACHE_FUZZ_BREAK=1 stops invalidating in none mode: the negative
 * control, which must make the stale check fire.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "mrcache.h"
#include "testbackend.h"

#define PAGE		4096u
#define ARENA_PAGES	64
#define HELD_MAX	8
#define REGS_MAX	4096

/* Every registration ever made in this run: handle -> stale?  The test
 * backend's handles are unique while live; a sequence number taken at
 * registration time tells old from new. */
struct model_reg {
	void *handle;
	uintptr_t start, end;
	int stale;
};

static struct test_backend tb;
static struct mrcache *cache;
static char *arena;
static int manual_monitor, broken_monitor;
static struct model_reg regs[REGS_MAX];
static unsigned nregs;
static struct mrcache_region *held[HELD_MAX];
static unsigned nheld;

static void fail(const char *what)
{
	fprintf(stderr, "fuzz-cache: %s\n", what);
	abort();
}

static struct model_reg *model_find(void *handle)
{
	for (unsigned i = nregs; i-- > 0;)
		if (regs[i].handle == handle)
			return &regs[i];
	return NULL;
}

/* A registration the cache just made: remember it as fresh.  Handles are
 * heap pointers and may be reused after a dereg, so the newest entry for a
 * handle is the one that counts. */
static void model_note(struct mrcache_region *r, uint64_t regs_before)
{
	if (tb.regs == regs_before)
		return;
	if (nregs == REGS_MAX) {
		memmove(regs, regs + REGS_MAX / 2, sizeof(regs[0]) * (REGS_MAX / 2));
		nregs = REGS_MAX / 2;
	}
	regs[nregs++] = (struct model_reg){
		.handle = mrcache_region_handle(r),
		.start = (uintptr_t)mrcache_region_addr(r),
		.end = (uintptr_t)mrcache_region_addr(r) + mrcache_region_length(r),
	};
}

static void model_changed(uintptr_t start, uintptr_t end)
{
	for (unsigned i = 0; i < nregs; i++)
		if (regs[i].start < end && regs[i].end > start)
			regs[i].stale = 1;
}

static void vm_changed(char *addr, size_t len)
{
	model_changed((uintptr_t)addr, (uintptr_t)addr + len);
	if (manual_monitor && !broken_monitor)
		mrcache_invalidate(cache, addr, len);
}

static void op_get(const uint8_t *b)
{
	size_t off = (size_t)(b[0] % ARENA_PAGES) * PAGE + (size_t)b[1] * 16;
	size_t len = 1 + (size_t)b[2] * 64 * (1 + b[3] % 4);
	unsigned access = b[3] >> 4;
	struct mrcache_region *r;
	uint64_t before = tb.regs;
	struct model_reg *m;
	int rc;

	if (off + len > (size_t)ARENA_PAGES * PAGE)
		len = (size_t)ARENA_PAGES * PAGE - off;
	if (nheld == HELD_MAX)
		return;
	rc = mrcache_get(cache, arena + off, len, access & MRCACHE_ACCESS_ALL, &r);
	if (rc == -ENOSPC || rc == -ENOMEM || rc == -EAGAIN || rc == -EFAULT)
		return;		/* injected failures */
	if (rc)
		fail("get failed unexpectedly");
	if ((char *)mrcache_region_addr(r) > arena + off ||
	    (char *)mrcache_region_addr(r) + mrcache_region_length(r) < arena + off + len)
		fail("region does not cover the request");
	if (!test_backend_covers(&tb, arena + off, len))
		fail("region handed out is not registered");
	model_note(r, before);
	m = model_find(mrcache_region_handle(r));
	if (!m)
		fail("registration unknown to the model");
	if (m->stale)
		fail("STALE: a get returned a registration of pages that changed");
	held[nheld++] = r;
}

static void op_put(const uint8_t *b)
{
	if (!nheld)
		return;
	unsigned i = b[0] % nheld;

	if (mrcache_put(cache, held[i]))
		fail("put failed");
	held[i] = held[--nheld];
}

static void op_vm(const uint8_t *b)
{
	size_t page = b[0] % ARENA_PAGES, n = 1 + b[1] % 4;
	char *addr = arena + page * PAGE;
	void *p;

	if (page + n > ARENA_PAGES)
		n = ARENA_PAGES - page;
	switch (b[2] % 4) {
	case 0:	/* munmap and map fresh pages at the same address */
		munmap(addr, n * PAGE);
		vm_changed(addr, n * PAGE);
		p = mmap(addr, n * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != addr)
			fail("remap failed");
		break;
	case 1:
		madvise(addr, n * PAGE, MADV_DONTNEED);
		vm_changed(addr, n * PAGE);
		break;
	case 2:	/* MAP_FIXED over */
		p = mmap(addr, n * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != addr)
			fail("mmap fixed failed");
		vm_changed(addr, n * PAGE);
		break;
	case 3:	/* mremap away and back */
		p = mremap(addr, n * PAGE, n * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
			   arena + ARENA_PAGES * PAGE);
		if (p == MAP_FAILED) {
			/* The range spans two VMAs (uffd registration splits
			 * them): mremap cannot move it; nothing changed. */
			if (errno == EFAULT)
				break;
			fail("mremap failed");
		}
		vm_changed(addr, n * PAGE);
		p = mremap(p, n * PAGE, n * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, addr);
		if (p != addr)
			fail("mremap back failed");
		vm_changed(arena + ARENA_PAGES * PAGE, n * PAGE);
		break;
	}
}

static void op_cache(const uint8_t *b)
{
	size_t page = b[0] % ARENA_PAGES;

	switch (b[1] % 5) {
	case 0:
		if (mrcache_invalidate(cache, arena + page * PAGE, 1 + b[2] * 32u) < 0)
			fail("invalidate failed");
		model_changed((uintptr_t)arena + page * PAGE,
			      (uintptr_t)arena + page * PAGE + 1 + b[2] * 32u);
		break;
	case 1:
		if (mrcache_flush(cache) < 0)
			fail("flush failed");
		break;
	case 2:
		if (mrcache_progress(cache) < 0)
			fail("progress failed");
		break;
	case 3:	/* a resource error, then whatever it is */
		test_backend_fail(&tb, b[2] & 1 ? -ENOSPC : -ENOMEM, 1 + b[2] % 3);
		break;
	case 4:
		test_backend_fail(&tb, -EFAULT, 1);
		break;
	}
}

static void setup(void)
{
	struct mrcache_config cfg;
	const char *mon = getenv("MRCACHE_FUZZ_MONITOR");
	enum mrcache_monitor_kind kind = MRCACHE_MONITOR_NONE;

	if (mon && mrcache_monitor_parse(mon, &kind))
		fail("bad MRCACHE_FUZZ_MONITOR");
	manual_monitor = kind == MRCACHE_MONITOR_NONE;
	broken_monitor = getenv("MRCACHE_FUZZ_BREAK") != NULL;
	test_backend_init(&tb, 0);
	test_backend_config(&tb, &cfg, kind);
	cfg.max_regions = 6;
	if (mrcache_create(&cfg, &cache))
		fail("cannot create the cache with that monitor");
	/* One spare page range after the arena for mremap's round trip. */
	arena = mmap(NULL, 2 * ARENA_PAGES * PAGE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED)
		fail("no arena");
}

static void teardown(void)
{
	while (nheld)
		mrcache_put(cache, held[--nheld]);
	if (mrcache_flush(cache) < 0 || mrcache_destroy(cache))
		fail("destroy failed");
	if (tb.live)
		fail("registrations leaked");
	if (tb.bad_deregs)
		fail("a registration was deregistered twice");
	test_backend_fini(&tb);
	munmap(arena, 2 * ARENA_PAGES * PAGE);
	nregs = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	for (size_t i = 0; i + 5 <= size; i += 5) {
		const uint8_t *b = data + i + 1;

		switch (data[i] % 4) {
		case 0: op_get(b); break;
		case 1: op_put(b); break;
		case 2: op_vm(b); break;
		case 3: op_cache(b); break;
		}
	}
	teardown();
	return 0;
}
