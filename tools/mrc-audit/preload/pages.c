/* SPDX-License-Identifier: MIT */
/*
 * pages.c - the frames a registration pinned, so that a CLEAR can be
 * told apart: one that changed the pages (MADV_DONTNEED, truncation,
 * copy-on-write) from one that left them mapped where they were (a VMA
 * or huge-page split in the same 2 MiB window, a collapse or migration
 * that failed on the pinned pages).  mrmon reports both as CLEAR.
 *
 * At registration, once the adapter holds its pins and while the watch
 * is still armed, the frames mapped over the range are read from
 * /proc/self/pagemap.  The pins keep those frames from being freed, so
 * as long as the registration lives no other page can take one of their
 * numbers: a frame number equal to one of them *is* that page.  That is
 * what makes the comparison sound here, and what the module's REVALIDATE
 * (ABI 2) lacked.  regs.c's mra_reg_recheck() arms a new watch first, so
 * that every invalidation before it has finished with the page tables,
 * then compares.
 *
 * Needs the mrmon witness (its WATCH refuses a range with an invalidation
 * in flight) and frame numbers in pagemap, which the kernel gives only to
 * CAP_SYS_ADMIN; without them every CLEAR stays stale, and the report says
 * why.  MRC_AUDIT_VERIFY=0 turns it off (the control of the suite).
 * On-demand-paging registrations pin nothing and are never compared.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "audit.h"

#define PM_PRESENT	(1ull << 63)
#define PM_SWAPPED	(1ull << 62)
#define PM_PFN		((1ull << 55) - 1)
#define PAGE		4096ul
#define PM_CHUNK	512		/* entries per pread */
/* 4 GiB of registration, 8 MiB of frame numbers: larger ones stay stale */
#define MRA_PAGES_MAX	(1ul << 20)

/* One entry per page: its frame number, or 0 when nothing is mapped there
 * (none, swapped out, a migration entry).  0 or -errno. */
static int mra_pages_read(uintptr_t first, size_t n, uint64_t *out)
{
	uint64_t e[PM_CHUNK];
	size_t done = 0, want;
	ssize_t got;

	while (done < n) {
		want = n - done < PM_CHUNK ? n - done : PM_CHUNK;
		got = pread(mra.pagemap_fd, e, want * sizeof(e[0]),
			    (off_t)((first / PAGE + done) * sizeof(e[0])));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0 || got % (ssize_t)sizeof(e[0]))
			return got < 0 ? -errno : -EIO;
		for (size_t i = 0; i < (size_t)got / sizeof(e[0]); i++)
			out[done + i] = (e[i] & (PM_PRESENT | PM_SWAPPED)) == PM_PRESENT ? e[i] & PM_PFN : 0;
		done += (size_t)got / sizeof(e[0]);
	}
	return 0;
}

void mra_pages_open(void)
{
	const char *v = getenv("MRC_AUDIT_VERIFY");
	volatile char probe = 1;	/* on this thread's stack: mapped */
	uint64_t pfn;

	mra.pagemap_fd = -1;
	if (v && !strcmp(v, "0")) {
		snprintf(mra.pages_why, sizeof(mra.pages_why), "MRC_AUDIT_VERIFY=0");
		return;
	}
	if (mra.w.kind != MRA_WITNESS_MRMON) {
		snprintf(mra.pages_why, sizeof(mra.pages_why),
			 "needs the mrmon witness (a WATCH that refuses a range being invalidated)");
		return;
	}
	mra.pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (mra.pagemap_fd < 0) {
		snprintf(mra.pages_why, sizeof(mra.pages_why), "/proc/self/pagemap: %s",
			 strerror(errno));
		return;
	}
	if (mra_pages_read((uintptr_t)&probe & ~(PAGE - 1), 1, &pfn) || !pfn) {
		snprintf(mra.pages_why, sizeof(mra.pages_why),
			 "/proc/self/pagemap gives no frame numbers (they need CAP_SYS_ADMIN)");
		close(mra.pagemap_fd);
		mra.pagemap_fd = -1;
	}
}

static uintptr_t mra_pages_first(const struct mra_reg *r)
{
	return r->va & ~(PAGE - 1);
}

static size_t mra_pages_count(const struct mra_reg *r)
{
	return (((r->va + r->len + PAGE - 1) & ~(PAGE - 1)) - mra_pages_first(r)) / PAGE;
}

/*
 * After the real registration succeeded (the pages are pinned), under
 * mra.lock.  The frames read are the pinned ones only if nothing changed
 * the mapping since the watch was armed, before the pin: the word, read
 * after them, says so.
 */
void mra_pages_baseline(struct mra_reg *r)
{
	size_t n = mra_pages_count(r);
	uint64_t *pfns;

	if (mra.pagemap_fd < 0 || !r->watched || (r->access & IBV_ACCESS_ON_DEMAND) ||
	    n > MRA_PAGES_MAX || !(pfns = malloc(n * sizeof(*pfns)))) {
		mra.st.no_baseline += mra.pagemap_fd >= 0;
		return;
	}
	if (mra_pages_read(mra_pages_first(r), n, pfns) || r->invalid ||
	    __atomic_load_n(r->word, __ATOMIC_ACQUIRE) != r->expected) {
		free(pfns);
		mra.st.no_baseline++;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (!pfns[i]) {		/* pinned, yet not mapped: do not guess */
			free(pfns);
			mra.st.no_baseline++;
			return;
		}
	}
	r->pfns = pfns;
	r->npages = n;
	mra.st.baselines++;
}

/* Whether the frames mapped now are the pinned ones, every page. */
bool mra_pages_same(const struct mra_reg *r)
{
	uint64_t now[PM_CHUNK];
	size_t n;

	for (size_t done = 0; done < r->npages; done += n) {
		n = r->npages - done < PM_CHUNK ? r->npages - done : PM_CHUNK;
		if (mra_pages_read(mra_pages_first(r) + done * PAGE, n, now) ||
		    memcmp(now, r->pfns + done, n * sizeof(now[0])))
			return false;
	}
	return true;
}

void mra_pages_drop(struct mra_reg *r)
{
	free(r->pfns);
	r->pfns = NULL;
	r->npages = 0;
}
