/* SPDX-License-Identifier: MIT */
/*
 * mrmon_fi.h - libfabric's MR cache served by /dev/mrmon (docs/libfabric.md).
 *
 * libmrcache-fabric.so implements libfabric's `struct fid_mem_monitor`
 * (rdma/fi_ext.h, libfabric >= 1.13) on top of the mrmon module:
 * subscribe = WATCH, unsubscribe = UNWATCH, valid = one acquire load of the
 * watch's word, and a thread that reads the module's event queue and calls
 * the importer's notify() for every invalidated range.
 *
 * Two ways to use it:
 *   LD_PRELOAD=libmrcache-fabric-preload.so prog   imports it at load time
 *   mrfi_monitor_open() + mrfi_monitor_import() before the first domain
 * FI_MR_CACHE_MONITOR (userfaultfd, memhooks, disabled) still overrides an
 * imported monitor: libfabric reads it after the import.
 */
#ifndef MRMON_FI_H
#define MRMON_FI_H

#include <stdint.h>
#include <rdma/fi_ext.h>

struct mrfi_stats {
	uint64_t watches;	/* WATCH calls that succeeded (cache misses) */
	uint64_t shared;	/* subscribes served by an intact watch */
	uint64_t watch_errors;	/* subscribes refused (no slot, ...) */
	uint64_t valid;		/* valid() calls that returned true (hits) */
	uint64_t invalid;	/* valid() calls that returned false */
	uint64_t events;	/* invalidation events read from the module */
	uint64_t notified;	/* invalidated watches reported to notify() */
	uint64_t overflows;	/* lost-event rescans */
	uint64_t live;		/* watches held now */
};

/*
 * A monitor on /dev/mrmon: -ENODEV when the module is not loaded,
 * -EPROTONOSUPPORT on an ABI mismatch.  The device is set up by start(),
 * which libfabric calls when its first MR cache uses the monitor.
 */
int mrfi_monitor_open(struct fid_mem_monitor **out);

/*
 * Makes libfabric's MR caches use this monitor (fi_open "mr_cache" and
 * fi_import_fid).  Must run before a domain with an MR cache is opened:
 * libfabric refuses (-FI_EBUSY) to replace a monitor in use.
 */
int mrfi_monitor_import(struct fid_mem_monitor *mon);

/*
 * Detaches the monitor from libfabric (if imported) and frees it.  Every
 * domain that used it must be closed first.
 */
void mrfi_monitor_close(struct fid_mem_monitor *mon);

void mrfi_monitor_stats(struct fid_mem_monitor *mon, struct mrfi_stats *out);

#endif
