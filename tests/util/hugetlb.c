/* SPDX-License-Identifier: MIT */
/* hugetlb.c - see hugetlb.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hugetlb.h"

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"

static long old_pages = -1;
static pid_t owner;

static long read_long(const char *path, const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!key ? sscanf(line, "%ld", &v) == 1
			 : !strncmp(line, key, strlen(key)) &&
			   sscanf(line + strlen(key), "%ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static int write_pages(long n)
{
	FILE *f = fopen(NR_HUGEPAGES, "w");
	int rc;

	if (!f)
		return -errno;
	rc = fprintf(f, "%ld\n", n) < 0 ? -EIO : 0;
	if (fclose(f) && !rc)
		rc = -errno;
	return rc;
}

static void restore(void)
{
	if (old_pages >= 0 && getpid() == owner)
		write_pages(old_pages);
}

size_t test_hugetlb_reserve(unsigned pages, char *why, size_t why_len)
{
	long kb = read_long("/proc/meminfo", "Hugepagesize:");
	long free_before = read_long("/proc/meminfo", "HugePages_Free:");
	long free_after;
	int rc;

	old_pages = read_long(NR_HUGEPAGES, NULL);
	if (kb <= 0 || old_pages < 0) {
		snprintf(why, why_len, "this kernel has no hugetlb pages");
		return 0;
	}
	rc = write_pages(old_pages + pages);
	if (rc) {
		snprintf(why, why_len, "cannot raise %s: %s", NR_HUGEPAGES, strerror(-rc));
		old_pages = -1;
		return 0;
	}
	owner = getpid();
	atexit(restore);
	free_after = read_long("/proc/meminfo", "HugePages_Free:");
	if (free_after < free_before + (long)pages) {
		snprintf(why, why_len, "only %ld of %u huge pages could be reserved",
			 free_after - free_before, pages);
		return 0;
	}
	return (size_t)kb << 10;
}
