/* SPDX-License-Identifier: MIT */
/* caps.c - see caps.h. */
#include <errno.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "caps.h"

int test_drop_capability(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (cap < 0 || cap >= 64)
		return -EINVAL;
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[cap / 32].effective &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}
