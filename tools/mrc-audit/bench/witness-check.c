/* SPDX-License-Identifier: MIT */
/*
 * witness-check - the audit's witness on its own, without a device: the
 * library's files, one registration record made by hand over a 64 KiB
 * buffer (its own VMA between PROT_NONE guards), then a change to the
 * buffer, and whether the witness invalidated the record.  tests/
 * test-audit-witness.c runs it under MRC_AUDIT_WITNESS=uffd (the host has
 * no /dev/mrmon) and =none (the control: nothing is ever invalid).
 *
 *   mrc-audit-witness-check
 *
 * Prints "witness KIND" and one line per case: "CASE valid" or "CASE
 * invalid (cause N)".  Cases: mprotect (RW -> R -> RW), remap (munmap,
 * then mmap at the address), dontneed (MADV_DONTNEED), mremap (moved
 * away).  Exit 0, or 2 when the buffer cannot be set up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "audit.h"

#define LEN (64ul << 10)
#define PAGE 4096ul

static const char *const kinds[] = { "none", "mrmon", "uffd" };

/* The buffer, between guards: nothing else shares its VMA. */
static char *buffer(void)
{
	char *p = mmap(NULL, LEN + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect(p + PAGE, LEN, PROT_READ | PROT_WRITE))
		return NULL;
	memset(p + PAGE, 1, LEN);
	return p + PAGE;
}

static struct mra_reg *watch(char *p)
{
	struct mra_reg *r;

	pthread_mutex_lock(&mra.lock);
	r = mra_reg_alloc();
	r->va = r->iova = (uintptr_t)p;
	r->len = LEN;
	mra_reg_watch(r);
	r->lkey = 0x5a;
	mra_reg_publish(r);
	pthread_mutex_unlock(&mra.lock);
	return r;
}

/* Whether the witness has told: the word, then (up to 1 s: the uffd
 * witness's handler thread runs after the call returned) the events. */
static void verdict(const char *name, struct mra_reg *r)
{
	struct timespec tick = { 0, 1000000 };
	bool invalid = false;

	for (int i = 0; i < 1000 && !invalid; i++) {
		invalid = __atomic_load_n(r->word, __ATOMIC_ACQUIRE) != r->expected;
		if (!invalid)
			nanosleep(&tick, NULL);
	}
	pthread_mutex_lock(&mra.lock);
	mra_events_drain();
	if (r->invalid)
		printf("%s invalid (cause %u)\n", name, r->cause);
	else
		printf("%s %s\n", name, invalid ? "invalid (word only)" : "valid");
	mra_reg_retire(r);
	pthread_mutex_unlock(&mra.lock);
}

int main(void)
{
	char *p = buffer(), *q;
	struct mra_reg *r;

	mra_init();	/* (the constructor ran it already) */
	snprintf(mra.opts.output, sizeof(mra.opts.output), "/dev/null");	/* no report */
	if (!p)
		return 2;
	printf("witness %s%s%s\n", kinds[mra.w.kind], mra.w.why[0] ? ": " : "", mra.w.why);

	r = watch(p);
	mprotect(p, LEN, PROT_READ);
	mprotect(p, LEN, PROT_READ | PROT_WRITE);
	verdict("mprotect", r);

	r = watch(p);
	munmap(p, LEN);
	if (mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0) != p)
		return 2;
	verdict("remap", r);

	r = watch(p);
	madvise(p, LEN, MADV_DONTNEED);
	verdict("dontneed", r);

	r = watch(p);
	q = mmap(NULL, LEN, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);	/* the destination */
	if (q == MAP_FAILED)
		return 2;
	q = mremap(p, LEN, LEN, MREMAP_MAYMOVE | MREMAP_FIXED, q);
	verdict("mremap", r);
	if (q != MAP_FAILED)
		munmap(q, LEN);
	return 0;
}
