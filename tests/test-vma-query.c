/* SPDX-License-Identifier: MIT */
/*
 * mrc_vma_query() (lib/monitor/vma.c) against a brute-force reading of
 * /proc/self/smaps: for every page around a mapping cut into several VMAs
 * and holes, and the ends and middle of every VMA of the process, the VMA
 * containing the address, or the next one above it; and the page size of
 * every VMA, a hugetlb one among them when a huge page can be reserved
 * (/proc/sys/vm/nr_hugepages, restored at exit).  Twice: with
 * PROCMAP_QUERY (Linux 6.11+; skipped before) and with a seccomp filter
 * that makes it fail with ENOTTY as older kernels do, so the reading of
 * the file is checked too.
 *
 * Negative control: after an mprotect() splits a VMA, the stale model and
 * the query must disagree at the split.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hugetlb.h"
#include "procmap.h"
#include "testutil.h"
#include "monitor/vma.h"

#define PG		4096ul
#define PAGES		64
#define MAX_VMAS	4096

static struct mrc_vma model[MAX_VMAS];
static size_t nmodel;
static char text[1 << 20];

/* The model: every mapping in /proc/self/smaps with its KernelPageSize,
 * read without allocating. */
static void read_model(void)
{
	int fd = open("/proc/self/smaps", O_RDONLY);
	size_t len = 0;
	ssize_t n;

	CHECK(fd >= 0);
	while ((n = read(fd, text + len, sizeof(text) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	text[len] = 0;
	nmodel = 0;
	for (char *l = text; *l && nmodel < MAX_VMAS; l = strchr(l, '\n') + 1) {
		unsigned long lo, hi, kb;

		/* [vsyscall] is in the kernel's half, no VMA. */
		if (sscanf(l, "%lx-%lx ", &lo, &hi) == 2 && (long)lo >= 0)
			model[nmodel++] = (struct mrc_vma){ lo, hi, 0 };
		else if (nmodel && sscanf(l, "KernelPageSize: %lu kB", &kb) == 1)
			model[nmodel - 1].page_size = kb << 10;
		if (!strchr(l, '\n'))
			break;
	}
}

/* What the model says: 0 and *v, or -ENOENT. */
static int model_query(uintptr_t addr, unsigned flags, struct mrc_vma *v)
{
	for (size_t i = 0; i < nmodel; i++) {
		if (model[i].end <= addr)
			continue;
		if (model[i].start > addr && !(flags & MRC_VMA_OR_NEXT))
			return -ENOENT;
		*v = model[i];
		return 0;
	}
	return -ENOENT;
}

/* Number of disagreements at addr, both modes. */
static int compare(int fd, uintptr_t addr, int quiet)
{
	int bad = 0;

	for (unsigned flags = 0; flags <= MRC_VMA_OR_NEXT; flags += MRC_VMA_OR_NEXT) {
		struct mrc_vma want = { 0, 0, 0 }, got = { 0, 0, 0 };
		int w = model_query(addr, flags, &want);
		int g = mrc_vma_query(fd, addr, flags, &got);

		if (w == g && (w || (want.start == got.start && want.end == got.end)))
			continue;
		bad++;
		if (!quiet)
			fprintf(stderr, "%#lx flags %u: model %d [%#lx, %#lx), query %d [%#lx, %#lx)\n",
				(unsigned long)addr, flags, w, (unsigned long)want.start,
				(unsigned long)want.end, g, (unsigned long)got.start,
				(unsigned long)got.end);
	}
	return bad;
}

/* The page size of every mapping, as smaps gives it. */
static int compare_page_sizes(int fd)
{
	int bad = 0;

	for (size_t i = 0; i < nmodel; i++) {
		struct mrc_vma got = { 0, 0, 0 };
		size_t want = model[i].page_size;

		if (mrc_vma_query(fd, model[i].start, MRC_VMA_PAGE_SIZE, &got) ||
		    got.page_size != want || mrc_vma_page_size(model[i].end - 1) != want) {
			fprintf(stderr, "[%#lx, %#lx): page size %zu, query %zu\n",
				(unsigned long)model[i].start, (unsigned long)model[i].end,
				want, got.page_size);
			bad++;
		}
	}
	return bad;
}

static int compare_all(int fd, char *p)
{
	int bad = 0;

	for (long i = -4; i < PAGES + 4; i++)
		bad += compare(fd, (uintptr_t)(p + i * (long)PG), 0);
	for (size_t i = 0; i < nmodel; i++) {
		struct mrc_vma v = model[i];

		bad += compare(fd, v.start, 0);
		bad += compare(fd, v.end - 1, 0);
		bad += compare(fd, v.start + (v.end - v.start) / 2, 0);
	}
	return bad + compare_page_sizes(fd);
}

/* PROCMAP_QUERY itself, to tell whether this kernel (or the filter) has it. */
static int has_procmap_query(int fd)
{
	__u64 q[13] = { sizeof(q), 0, (uintptr_t)&nmodel };

	return ioctl(fd, _IOWR('f', TEST_PROCMAP_QUERY_NR, __u64[13]), q) == 0 || errno != ENOTTY;
}

/* 64 pages: a hole, two protections, another hole; and a hugetlb
 * mapping when a huge page can be had. */
static char *make_layout(void)
{
	char *p = mmap(NULL, PAGES * PG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char why[160];
	size_t huge = test_hugetlb_reserve(1, why, sizeof(why));

	if (huge && mmap(NULL, huge, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0) != MAP_FAILED)
		printf("a hugetlb mapping of %zu KiB among them\n", huge >> 10);
	else
		printf("no hugetlb mapping (%s): base pages only\n",
		       huge ? strerror(errno) : why);

	CHECK(p != MAP_FAILED);
	CHECK_EQ(munmap(p + 8 * PG, 4 * PG), 0);
	CHECK_EQ(mprotect(p + 20 * PG, 6 * PG, PROT_READ), 0);
	CHECK_EQ(mprotect(p + 30 * PG, 2 * PG, PROT_NONE), 0);
	CHECK_EQ(munmap(p + 50 * PG, PG), 0);
	return p;
}

int main(void)
{
	int fd = mrc_vma_open();
	char *p = make_layout();
	int native, rc;

	CHECK(fd >= 0);
	native = has_procmap_query(fd);
	if (native) {
		read_model();
		CHECK_EQ(compare_all(fd, p), 0);
		printf("PROCMAP_QUERY: %zu VMAs agree with /proc/self/smaps\n", nmodel);
	} else {
		printf("PROCMAP_QUERY: not in this kernel, not checked\n");
	}
	rc = test_hide_procmap_query();
	if (rc)
		SKIP("seccomp unavailable (%s)", strerror(-rc));
	CHECK(!has_procmap_query(fd));
	read_model();
	CHECK_EQ(compare_all(fd, p), 0);
	printf("reading /proc/self/maps: %zu VMAs agree\n", nmodel);

	/* The control: a split the model has not seen is found. */
	CHECK_EQ(mprotect(p + 40 * PG, PG, PROT_READ), 0);
	CHECK(compare(fd, (uintptr_t)(p + 40 * PG), 1) > 0);
	printf("control: a stale model disagrees\n");
	close(fd);
	return test_result();
}
