/* SPDX-License-Identifier: MIT */
/*
 * The module parameters are bounded even for root: 0 and values above the
 * ceilings (max_slots 2^21, max_events 2^20, max_batch 2^16) are refused
 * with EINVAL (ERANGE for a number beyond 32 bits) and leave the value as
 * it was; a value inside is taken
 * (the control).  Past the ceilings a SETUP would ask kvcalloc() for more
 * than it accepts and the kernel would warn.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "testutil.h"
#include "mrmon_priv.h"

static const char *path_of(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "/sys/module/mrmon/parameters/%s", name);
	return path;
}

/* 0 or -errno of writing `value` to the parameter. */
static int write_value(const char *name, unsigned long value)
{
	char buf[32];
	int fd = open(path_of(name), O_WRONLY), rc = 0;
	int n = snprintf(buf, sizeof(buf), "%lu\n", value);

	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static long read_value(const char *name)
{
	return priv_read_long(path_of(name));
}

static void check_param(const char *name, unsigned long ceiling)
{
	long before = read_value(name);

	CHECK(before > 0);
	CHECK_EQ(write_value(name, 0), -EINVAL);
	CHECK_EQ(write_value(name, ceiling + 1), -EINVAL);
	CHECK_EQ(write_value(name, 1ul << 40), -ERANGE);	/* not a u32 */
	CHECK_EQ(read_value(name), before);
	/* Control: a value inside the bounds is taken. */
	CHECK_EQ(write_value(name, ceiling), 0);
	CHECK_EQ(read_value(name), (long)ceiling);
	CHECK_EQ(write_value(name, (unsigned long)before), 0);
	CHECK_EQ(read_value(name), before);
}

int main(void)
{
	struct stat st;

	if (stat("/sys/module/mrmon/parameters", &st) != 0)
		SKIP("mrmon is not loaded");
	check_param("max_slots", 1ul << 21);
	check_param("max_events", 1ul << 20);
	check_param("max_batch", 1ul << 16);
	return test_result();
}
