/* SPDX-License-Identifier: MIT */
/* util.c - clocks, random numbers, medians and memory probes. */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: cheap enough not to show in a 10 ns hit. */
uint64_t rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(double *v, int n)
{
	double tmp[BENCH_MAX_ROUNDS];

	if (n <= 0)
		return 0;
	memcpy(tmp, v, (size_t)n * sizeof(*v));
	qsort(tmp, (size_t)n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

int batches_init(struct batches *b, int cap)
{
	b->n = 0;
	b->cap = cap;
	b->per_op = calloc((size_t)cap, sizeof(*b->per_op));
	return b->per_op ? 0 : -ENOMEM;
}

void batches_add(struct batches *b, uint64_t ns, long ops)
{
	if (b->n < b->cap && ops > 0)
		b->per_op[b->n++] = (double)ns / (double)ops;
}

double batches_median(struct batches *b)
{
	double m = 0;

	if (b->n > 0) {
		qsort(b->per_op, (size_t)b->n, sizeof(*b->per_op), cmp_double);
		m = b->n % 2 ? b->per_op[b->n / 2] :
			(b->per_op[b->n / 2 - 1] + b->per_op[b->n / 2]) / 2;
	}
	free(b->per_op);
	b->per_op = NULL;
	return m;
}

size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

void *pages_reserve(size_t n)
{
	size_t len = n * page_size();
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Small pages only: a huge page would make one region's munmap
	 * split a 2 MiB mapping, which is not what we measure. */
	madvise(p, len, MADV_NOHUGEPAGE);
	return p;
}

void *pages_map(size_t n)
{
	size_t len = n * page_size();
	void *p = pages_reserve(n);

	if (!p)
		return NULL;
	for (size_t off = 0; off < len; off += page_size())
		((volatile char *)p)[off] = 1;
	return p;
}

size_t mem_malloced(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

size_t mem_resident(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, resident = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * page_size();
}

int malloc_mmaps_1m(void)
{
	void *p = malloc(1u << 20);
	const size_t *size;
	int mmapped;

	if (!p)
		return 0;
	/* The size word before the block: bit 1 is IS_MMAPPED. */
	size = (const size_t *)((uintptr_t)p - sizeof(size_t));
	mmapped = (*size & 2) != 0;
	if (!mmapped)
		free(p);
	return mmapped;
}

void **regions_layout(void *base, size_t n)
{
	void **addr = malloc(n * sizeof(*addr));

	if (!addr)
		return NULL;
	for (size_t i = 0; i < n; i++)
		addr[i] = (char *)base + 2 * i * page_size();
	return addr;
}
