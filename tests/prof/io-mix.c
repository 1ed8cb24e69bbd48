/* SPDX-License-Identifier: MIT */
/*
 * io-mix - large reads into sub-ranges of a changing set of buffers, for
 * comparing mrc-prof's simulated cache with the real one on a replay:
 * hits, subrange hits, overlapping requests (merges), and buffers that are
 * unmapped, remapped, grown by mremap and discarded by madvise.
 * Deterministic: a fixed-seed generator, no ASLR needed.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define NBUF 16
#define PAGE 4096

static uint64_t seed = 42;

static uint64_t rnd(uint64_t n)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return (seed >> 33) % n;
}

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

int main(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	char *buf[NBUF];
	size_t len[NBUF];

	if (fd < 0)
		return 1;
	for (int i = 0; i < NBUF; i++) {
		len[i] = (4 + rnd(60)) * PAGE;
		buf[i] = map(len[i]);
	}
	for (int it = 0; it < 2000; it++) {
		int i = (int)rnd(NBUF);
		size_t n = (4 + rnd(len[i] / PAGE - 3)) * PAGE, off;

		if (n > len[i])
			n = len[i];
		off = rnd(len[i] - n + 1) & ~(size_t)(PAGE - 1);
		if (read(fd, buf[i] + off, n) != (ssize_t)n)
			return 1;
		if (it % 50 == 49) {		/* replace a buffer */
			munmap(buf[i], len[i]);
			len[i] = (4 + rnd(60)) * PAGE;
			buf[i] = map(len[i]);
		} else if (it % 70 == 69) {	/* discard part of one */
			madvise(buf[i] + off, n, MADV_DONTNEED);
		} else if (it % 90 == 89) {	/* grow one, maybe moving it */
			char *p = mremap(buf[i], len[i], len[i] + 8 * PAGE, MREMAP_MAYMOVE);

			if (p == MAP_FAILED)
				return 1;
			buf[i] = p;
			len[i] += 8 * PAGE;
		}
	}
	return 0;
}
