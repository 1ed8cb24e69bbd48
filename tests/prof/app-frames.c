/* SPDX-License-Identifier: MIT */
/*
 * app-frames.c - for app-frames.sh: 20 blocks of 40 MiB (above glibc's
 * largest mmap threshold, so each is an mmap inside malloc and an munmap
 * inside free) allocated by a function whose symbol is a C++ mangled name,
 * mrc::prof::big_alloc(unsigned long), written as an asm label so that no
 * C++ compiler is needed.  The report's call sites must reach it through
 * libc's malloc and sysmalloc, and show it demangled.
 */
#include <stdlib.h>

#define BLOCK (40u << 20)

void *big_alloc(size_t n) __asm__("_ZN3mrc4prof9big_allocEm");

__attribute__((noinline)) void *big_alloc(size_t n)
{
	char *p = malloc(n);

	if (p)
		((volatile char *)p)[n - 1] = 1;
	return p;
}

int main(void)
{
	for (int i = 0; i < 20; i++) {
		void *p = big_alloc(BLOCK);

		if (!p)
			return 1;
		free(p);
	}
	return 0;
}
