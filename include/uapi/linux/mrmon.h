/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * mrmon.h - the ABI of /dev/mrmon, the VM-activity monitor behind mrcache.
 *
 * Shared by the kernel module (kmod/) and the library (lib/monitor/kernel.c);
 * docs/abi.md is the reference.  Rules: only __u32/__u64, explicit padding,
 * pointers and lengths in __u64; every flags, pad, reserved and output-only
 * field must be zero on input (-EINVAL otherwise); unknown ioctl numbers
 * give -ENOTTY; new behaviour gets a new command or a feature bit, never a
 * changed struct.
 *
 * 64-bit only: the module builds only for 64-bit kernels and serves only
 * 64-bit processes (a 32-bit process gets -ENOTTY from every ioctl), since
 * the words are 64-bit values the hit path must load in one access.
 *
 * Use: open("/dev/mrmon") binds the descriptor to the caller's address
 * space; HANDSHAKE; SETUP; mmap(PROT_READ, MAP_SHARED) of map_size bytes;
 * then WATCH/UNWATCH batches, and read()/poll() for events.  A
 * call from any other address space (a forked child, a descriptor passed
 * over a socket) fails with -EPERM.
 */
#ifndef _UAPI_LINUX_MRMON_H
#define _UAPI_LINUX_MRMON_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define MRMON_ABI_VERSION	3

/*
 * The word of a watch: generation << 1 | 1 while the range is intact; the
 * module clears bit 0 (store-release) before the unmapping call returns,
 * and frees the watch there and then: a word that no longer equals the
 * watch's `expected` means the watch is gone (do not UNWATCH it).  Every
 * watch gets a generation never used before in this descriptor.
 */
#define MRMON_WORD_VALID	1ull

/* HANDSHAKE.features */
#define MRMON_FEATURE_EVENTS	 (1ull << 0) /* read()/poll() event queue */
#define MRMON_FEATURE_BATCH	 (1ull << 1) /* WATCH/UNWATCH take batches */
/* bit 2 was ABI 1's PFN_CHECK, bit 3 ABI 2's REVALIDATE: never reported again */

struct mrmon_handshake {
	__u32 abi_version;	/* in: MRMON_ABI_VERSION; out: the module's */
	__u32 flags;		/* in: 0 */
	__u64 features;		/* out: MRMON_FEATURE_* */
	__u32 max_slots;	/* out: largest SETUP.nslots */
	__u32 max_events;	/* out: largest SETUP.nevents */
	__u32 max_batch;	/* out: largest batch count */
	__u32 header_size;	/* out: offset of the word array in the map */
	__u32 event_size;	/* out: sizeof(struct mrmon_event) */
	__u32 pad;		/* 0 */
	__u64 reserved[4];	/* 0 */
};

struct mrmon_setup {
	__u32 nslots;		/* in: 1..max_slots watches at once */
	__u32 nevents;		/* in: 1..max_events queued events */
	__u32 flags;		/* in: 0 */
	__u32 pad;		/* 0 */
	__u64 map_size;		/* out: bytes to mmap at offset 0 */
	__u64 reserved[2];	/* 0 */
};

/*
 * One WATCH entry.  `expected` 0 on return means NOT ARMED: an
 * invalidation overlapping the range was in flight, no watch was made and
 * no slot taken (`slot` is 0); the caller retries, as after a miss.
 * Otherwise the range is watched and `expected` is its word's value
 * (bit 0 set) while it is intact.
 */
struct mrmon_range {
	__u64 start;		/* in: page-rounded down */
	__u64 len;		/* in: > 0; the end is page-rounded up */
	__u64 cookie;		/* in: comes back in events */
	__u32 flags;		/* in: 0 (bit 0 was ABI 2's SNAPSHOT) */
	__u32 slot;		/* out: index of the word */
	__u64 expected;		/* out: the word's value while intact, or 0 */
};

/*
 * One UNWATCH entry.  `expected` is what WATCH returned; -ESTALE if the
 * slot no longer holds that watch (an invalidation freed it: harmless,
 * and avoidable by skipping UNWATCH when the word differs from expected).
 */
struct mrmon_unwatch_entry {
	__u32 slot;
	__u32 flags;		/* 0 */
	__u64 expected;
};

/*
 * WATCH and UNWATCH: the whole array is copied in before any entry runs
 * (-EFAULT, done 0, if it cannot be); entries are then processed in
 * order; on an error the call returns it with `done` set to the index of
 * the failing entry (entries before it took effect).  WATCH copies the
 * array back once at the end; if that fails, every watch it made is
 * removed again and the call returns -EFAULT with done 0.
 */
struct mrmon_batch {
	__u64 entries;		/* in: user pointer to the array */
	__u32 count;		/* in: 1..max_batch */
	__u32 flags;		/* in: 0 */
	__u32 done;		/* out: entries that took effect */
	__u32 pad;		/* 0 */
	__u64 reserved[2];	/* 0 */
};

/* The first page of the map. */
struct mrmon_header {
	__u64 invalidations;	/* words invalidated so far */
	__u64 pending;		/* events read() would return now */
	__u64 overflows;	/* events dropped on a full queue */
	__u64 nslots;		/* length of the word array */
	__u64 reserved[4];	/* [0] was ABI 2's revalidations */
};

enum mrmon_cause {
	MRMON_CAUSE_UNMAP = 1,		/* munmap, mremap, MAP_FIXED over */
	/*
	 * CLEAR: pages zapped, replaced or split (madvise, COW after fork,
	 * collapse, a VMA or huge-page split)
	 */
	MRMON_CAUSE_CLEAR = 2,
	MRMON_CAUSE_RELEASE = 3,	/* the address space is torn down */
	MRMON_CAUSE_MIGRATE = 4,	/* pages moved (device memory) */
	MRMON_CAUSE_EXCLUSIVE = 5,	/* device-exclusive access taken */
	MRMON_CAUSE_OTHER = 6,		/* an event type this ABI predates */
	MRMON_CAUSE_OVERFLOW = 7,	/* events were lost: rescan the words */
};

/* read() returns whole events; an OVERFLOW event has slot ~0u. */
struct mrmon_event {
	__u64 cookie;
	__u64 start;		/* invalidated part, clipped to the watch */
	__u64 end;
	__u64 generation;	/* of the watch (word >> 1) */
	__u32 slot;
	__u32 cause;		/* enum mrmon_cause */
};

/* 0xBB: free in Documentation/userspace-api/ioctl/ioctl-number.rst
 * (0xB7 is nsfs and remoteproc, 0xB8 mshv, 0xBA liveupdate).
 */
#define MRMON_IOC_MAGIC		0xBB
#define MRMON_IOC_HANDSHAKE	_IOWR(MRMON_IOC_MAGIC, 0, struct mrmon_handshake)
#define MRMON_IOC_SETUP		_IOWR(MRMON_IOC_MAGIC, 1, struct mrmon_setup)
#define MRMON_IOC_WATCH		_IOWR(MRMON_IOC_MAGIC, 2, struct mrmon_batch)
#define MRMON_IOC_UNWATCH	_IOWR(MRMON_IOC_MAGIC, 3, struct mrmon_batch)
/* ABI 2's REVALIDATE: removed in ABI 3, always -EOPNOTSUPP (never reused) */
#define MRMON_IOC_REVALIDATE	_IOWR(MRMON_IOC_MAGIC, 4, struct mrmon_batch)

#endif
