/* SPDX-License-Identifier: MIT */
/*
 * mrmon_fi_preload.c - LD_PRELOAD=libmrcache-fabric-preload.so: an unmodified
 * libfabric program gets the mrmon monitor for its MR caches.
 *
 * The constructor runs before main(), so before any domain exists, which
 * is when libfabric accepts an imported monitor.  Without /dev/mrmon it
 * says so once and leaves libfabric's own monitor in place.
 * MRMON_FI_STATS=1 prints the monitor's counters at exit (on stderr).
 * The monitor is not closed at exit: a domain the program left open may
 * still use it, and libfabric has no way to hand it back.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mrmon_fi.h"

static struct fid_mem_monitor *mrfi_preloaded;

__attribute__((constructor)) static void mrfi_preload(void)
{
	struct fid_mem_monitor *mon;
	int rc = mrfi_monitor_open(&mon);

	if (rc) {
		fprintf(stderr, "mrmon-fi: not imported: /dev/mrmon: %s\n", strerror(-rc));
		return;
	}
	rc = mrfi_monitor_import(mon);
	if (rc) {
		fprintf(stderr, "mrmon-fi: not imported: fi_import: %s\n", fi_strerror(-rc));
		mrfi_monitor_close(mon);
		return;
	}
	mrfi_preloaded = mon;
}

__attribute__((destructor)) static void mrfi_preload_stats(void)
{
	const char *env = getenv("MRMON_FI_STATS");
	struct mrfi_stats s;

	if (!mrfi_preloaded || !env || strcmp(env, "1"))
		return;
	mrfi_monitor_stats(mrfi_preloaded, &s);
	fprintf(stderr, "mrmon-fi: watches %" PRIu64 " shared %" PRIu64 " errors %" PRIu64
		" valid %" PRIu64 " invalid %" PRIu64 " events %" PRIu64 " notified %" PRIu64
		" overflows %" PRIu64 " live %" PRIu64 "\n",
		s.watches, s.shared, s.watch_errors, s.valid, s.invalid, s.events,
		s.notified, s.overflows, s.live);
}
