/* SPDX-License-Identifier: MIT */
/*
 * mrcache_put() of a region the cache did not hand out is -EINVAL and
 * changes nothing: a region of another cache (held, or invalidated so
 * that its last put deregisters it: the other cache's backend must not
 * see that deregistration), a pointer into a region slot but not at its
 * start, into the cold half of its slab, into the part of its slab
 * arena that is reserved but not in use yet, a fake region that
 * looks held, and a slot-aligned pointer into memory that is not
 * readable at all (the check must not dereference it).  Controls: the
 * right cache takes each of its own regions back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "cache/region.h"
#include "testbackend.h"
#include "testutil.h"

#define PAGE 4096

struct two {
	struct test_backend tba, tbb;
	struct mrcache *a, *b;
	char *buf;
};

static void two_create(struct two *t)
{
	struct mrcache_config cfg;

	test_backend_init(&t->tba, 0);
	test_backend_init(&t->tbb, 0);
	test_backend_config(&t->tba, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &t->a), 0);
	test_backend_config(&t->tbb, &cfg, MRCACHE_MONITOR_NONE);
	CHECK_EQ(mrcache_create(&cfg, &t->b), 0);
	t->buf = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(t->buf != MAP_FAILED);
}

/* B's region, held, put into A: refused, and still B's. */
static void held_region_of_other(struct two *t)
{
	struct mrcache_region *rb;

	CHECK_EQ(mrcache_get(t->b, t->buf, PAGE, 0, &rb), 0);
	CHECK_EQ(mrcache_put(t->a, rb), -EINVAL);
	CHECK_EQ(mrcache_put(t->b, rb), 0);
	CHECK_EQ(mrcache_put(t->b, rb), -EINVAL);	/* no longer held */
	CHECK_EQ(t->tbb.deregs, 0);
}

/* B's region, invalidated while held: only B's own put deregisters it,
 * through B's backend. */
static void invalidated_region_of_other(struct two *t)
{
	struct mrcache_region *rb;
	uint64_t key;

	CHECK_EQ(mrcache_get(t->b, t->buf + PAGE, PAGE, 0, &rb), 0);
	key = mrcache_region_key(rb);
	CHECK_EQ(mrcache_invalidate(t->b, t->buf + PAGE, PAGE), 1);
	CHECK_EQ(mrcache_put(t->a, rb), -EINVAL);
	CHECK_EQ(t->tba.deregs + t->tba.bad_deregs, 0);
	CHECK_EQ(t->tbb.deregs, 0);
	CHECK(test_backend_covers(&t->tbb, t->buf + PAGE, PAGE));
	CHECK_EQ(mrcache_region_key(rb), key);
	CHECK_EQ(mrcache_put(t->b, rb), 0);
	CHECK_EQ(t->tbb.deregs, 1);
	CHECK(!test_backend_covers(&t->tbb, t->buf + PAGE, PAGE));
}

/* Pointers near A's own held region that are not a region slot. */
static void not_a_slot(struct two *t)
{
	struct mrcache_region *ra;
	char *slab;

	CHECK_EQ(mrcache_get(t->a, t->buf + 2 * PAGE, PAGE, 0, &ra), 0);
	slab = (char *)region_slab(ra);
	CHECK_EQ(mrcache_put(t->a, (struct mrcache_region *)((char *)ra + 8)), -EINVAL);
	CHECK_EQ(mrcache_put(t->a, (struct mrcache_region *)region_cold(ra)), -EINVAL);
	CHECK_EQ(mrcache_put(t->a, (struct mrcache_region *)(slab + REGION_SLAB_BYTES - 64)),
		 -EINVAL);
	/* The next slab of A's slab arena: reserved but not in use yet, so
	 * PROT_NONE (lib/cache/arena.h): any access would fault. */
	CHECK_EQ(mrcache_put(t->a, (struct mrcache_region *)(slab + REGION_SLAB_BYTES)), -EINVAL);
	CHECK_EQ(mrcache_region_length(ra), PAGE);
	CHECK_EQ(mrcache_put(t->a, ra), 0);
	CHECK_EQ(t->tba.bad_deregs, 0);
}

/* Memory that is no region at all: a fake one that looks held, and a
 * slot-aligned pointer into a mapping that faults on any access. */
static void not_from_any_slab(struct two *t)
{
	struct mrcache_region *fake = aligned_alloc(REGION_SLAB_BYTES, REGION_SLAB_BYTES);
	char *none = mmap(NULL, 2 * REGION_SLAB_BYTES, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t aligned;

	CHECK(fake != NULL && none != MAP_FAILED);
	if (!fake || none == MAP_FAILED)
		return;
	memset(fake, 0, REGION_SLAB_BYTES);
	fake[1].refstate = 1;
	CHECK_EQ(mrcache_put(t->a, &fake[1]), -EINVAL);
	CHECK_EQ(fake[1].refstate, 1);
	CHECK_EQ(fake[1].last_use, 0);
	aligned = ((uintptr_t)none + REGION_SLAB_BYTES - 1) & ~(uintptr_t)(REGION_SLAB_BYTES - 1);
	CHECK_EQ(mrcache_put(t->a, (struct mrcache_region *)(aligned + 64)), -EINVAL);
	munmap(none, 2 * REGION_SLAB_BYTES);
	free(fake);
}

int main(void)
{
	struct two t;

	two_create(&t);
	held_region_of_other(&t);
	invalidated_region_of_other(&t);
	not_a_slot(&t);
	not_from_any_slab(&t);
	CHECK_EQ(mrcache_destroy(t.a), 0);
	CHECK_EQ(mrcache_destroy(t.b), 0);
	CHECK_EQ(t.tba.deregs, t.tba.regs);
	CHECK_EQ(t.tba.bad_deregs, 0);
	CHECK_EQ(t.tbb.bad_deregs, 0);
	CHECK_EQ(test_backend_fini(&t.tba), 0);
	CHECK_EQ(test_backend_fini(&t.tbb), 0);
	munmap(t.buf, 4 * PAGE);
	return test_result();
}
