/* SPDX-License-Identifier: MIT */
/*
 * module.c - the mrmon module, when /dev/mrmon exists: the ABI version and
 * features its HANDSHAKE reports (include/uapi/linux/mrmon.h), against the
 * ones this library speaks.  A module of another ABI still fills the
 * struct (and answers -EPROTONOSUPPORT), so its version is shown too.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <uapi/linux/mrmon.h>
#include "info.h"

#define DEV "/dev/mrmon"

static void print_features(FILE *out, __u64 f)
{
	static const struct {
		__u64 bit;
		const char *name;
	} names[] = {
		{ MRMON_FEATURE_EVENTS, "events" },
		{ MRMON_FEATURE_BATCH, "batch" },
	};

	fprintf(out, "  features      ");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (f & names[i].bit)
			fprintf(out, "%s ", names[i].name);
		f &= ~names[i].bit;
	}
	if (f)
		fprintf(out, "unknown:0x%llx", (unsigned long long)f);
	fprintf(out, "\n");
}

/* /sys/module/mrmon/version, when the module declares one. */
static void print_module_version(FILE *out)
{
	char v[64] = "";
	FILE *f = fopen("/sys/module/mrmon/version", "r");

	if (!f)
		return;
	if (fgets(v, sizeof(v), f))
		fprintf(out, "  version       %s%s", v, strchr(v, '\n') ? "" : "\n");
	fclose(f);
}

void info_module(FILE *out)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	int fd = open(DEV, O_RDWR | O_CLOEXEC), rc;

	fprintf(out, "mrmon module (%s):\n", DEV);
	if (fd < 0) {
		fprintf(out, "  not usable: %s%s\n", strerror(errno),
			errno == ENOENT ? " (not loaded: modprobe mrmon)" : "");
		return;
	}
	rc = ioctl(fd, MRMON_IOC_HANDSHAKE, &hs) ? errno : 0;
	close(fd);
	if (rc && rc != EPROTONOSUPPORT) {
		fprintf(out, "  HANDSHAKE failed: %s\n", strerror(rc));
		return;
	}
	fprintf(out, "  ABI version   %u (this library speaks %u%s)\n", hs.abi_version,
		MRMON_ABI_VERSION, rc ? ": refused" : "");
	print_module_version(out);
	print_features(out, hs.features);
	fprintf(out, "  limits        %u slots, %u events, %u per batch\n", hs.max_slots,
		hs.max_events, hs.max_batch);
}
