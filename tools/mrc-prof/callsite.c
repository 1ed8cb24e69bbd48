/* SPDX-License-Identifier: MIT */
/* callsite.c - stack scan for return addresses, and site interning. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include "callsite.h"
#include "owner.h"
#include "unwind.h"

/* 4 KiB of stack above the wrapper: enough to get past glibc's malloc,
 * sysmalloc and stdio frames to the application's. */
#define SCAN_WORDS 512
#define UNWIND_MAX 32		/* frames unwound before the filter */

/* Open-addressing tables, sized as powers of two, never more than half
 * full.  Site table: hash of the frames -> site id.  Return-address
 * table: (tgid, address) -> verdict, so each candidate word's code bytes
 * are read once per process. */
struct ra_slot {
	uint64_t addr;
	uint32_t tgid;		/* 0: empty */
	uint32_t is_ret;
};

struct mp_callsites {
	struct mp_trace *t;
	struct mp_maps *maps;
	int depth;
	struct mp_unwinder *unwinder;	/* MP_UNWIND_DWARF only */
	/* Scan mode: a call the scan gives to the library or the profiler is
	 * checked by unwinding (stale words of an earlier call into the
	 * library must not make the program's call the library's). */
	struct mp_unwinder *checker;
	struct mp_owners *owners;
	uint32_t *site_slots;	/* site id, 0: empty */
	size_t site_cap, site_n;
	struct ra_slot *ra;
	size_t ra_cap, ra_n;
};

int mp_callsites_create(struct mp_trace *t, struct mp_maps *maps, int depth,
			enum mp_unwind_mode mode, struct mp_callsites **out)
{
	struct mp_callsites *cs = calloc(1, sizeof(*cs));

	if (!cs)
		return -ENOMEM;
	cs->t = t;
	cs->maps = maps;
	cs->depth = depth < 1 ? 1 : depth > MP_MAX_FRAMES ? MP_MAX_FRAMES : depth;
	cs->site_cap = 1024;
	cs->ra_cap = 1024;
	cs->site_slots = calloc(cs->site_cap, sizeof(*cs->site_slots));
	cs->ra = calloc(cs->ra_cap, sizeof(*cs->ra));
	if (mode == MP_UNWIND_DWARF && mp_unwinder_create(&cs->unwinder)) {
		mp_callsites_destroy(cs);
		return -ENOMEM;
	}
	if (!cs->site_slots || !cs->ra || mp_owners_create(t, &cs->owners)) {
		mp_callsites_destroy(cs);
		return -ENOMEM;
	}
	*out = cs;
	return 0;
}

void mp_callsites_destroy(struct mp_callsites *cs)
{
	if (!cs)
		return;
	free(cs->site_slots);
	free(cs->ra);
	mp_unwinder_destroy(cs->unwinder);
	mp_unwinder_destroy(cs->checker);
	mp_owners_destroy(cs->owners);
	free(cs);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t site_hash(const struct mp_site *s)
{
	uint64_t h = s->nframes;

	for (uint32_t i = 0; i < s->nframes; i++)
		h = mix(mix(h, s->frames[i].obj), s->frames[i].vaddr);
	return h;
}

static int site_equal(const struct mp_site *a, const struct mp_site *b)
{
	if (a->nframes != b->nframes)
		return 0;
	for (uint32_t i = 0; i < a->nframes; i++)
		if (a->frames[i].obj != b->frames[i].obj ||
		    a->frames[i].vaddr != b->frames[i].vaddr)
			return 0;
	return 1;
}

static int site_table_grow(struct mp_callsites *cs)
{
	size_t ncap = cs->site_cap * 2;
	uint32_t *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < cs->site_cap; i++) {
		uint32_t id = cs->site_slots[i];
		size_t j;

		if (!id)
			continue;
		for (j = site_hash(&cs->t->sites[id]) & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
			;
		n[j] = id;
	}
	free(cs->site_slots);
	cs->site_slots = n;
	cs->site_cap = ncap;
	return 0;
}

static uint32_t site_intern(struct mp_callsites *cs, const struct mp_site *s)
{
	size_t j;
	uint32_t id;

	if (2 * (cs->site_n + 1) > cs->site_cap && site_table_grow(cs))
		return 0;
	for (j = site_hash(s) & (cs->site_cap - 1); cs->site_slots[j];
	     j = (j + 1) & (cs->site_cap - 1))
		if (site_equal(&cs->t->sites[cs->site_slots[j]], s))
			return cs->site_slots[j];
	if (mp_trace_add_site(cs->t, s, &id))
		return 0;
	cs->site_slots[j] = id;
	cs->site_n++;
	return id;
}

static int read_mem(pid_t tid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* Does the instruction before ret look like a call?  b holds the 8 bytes
 * before ret.  Forms: e8 rel32; ff /2 with every ModRM addressing mode
 * (register, [reg], disp8, disp32, rip-relative, SIB). */
/* Words of stack from sp, fewer near the top of the stack: the read
 * stops at the end of the mapping. */
static int read_stack(pid_t tid, uint64_t sp, uint64_t *words)
{
	struct iovec local = { words, SCAN_WORDS * sizeof(*words) };
	struct iovec remote = { (void *)(uintptr_t)sp, SCAN_WORDS * sizeof(*words) };
	ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);

	return got > 0 ? (int)(got / (ssize_t)sizeof(*words)) : 0;
}

static int ends_with_call(const uint8_t b[8])
{
#define FF2(i) (b[i] == 0xff && (b[(i) + 1] & 0x38) == 0x10)
	if (b[3] == 0xe8)
		return 1;
	if (FF2(6) && (b[7] & 0xc0) != 0x40 && (b[7] & 0xc0) != 0x80)
		return 1;		/* ff d0+r, ff 10+r */
	if (FF2(5) && ((b[6] & 0xc0) == 0x40 || (b[6] & 0x07) == 4))
		return 1;		/* ff 50+r d8, ff 14 24 */
	if (FF2(4) && (b[5] & 0xc0) == 0x40 && (b[5] & 0x07) == 4)
		return 1;		/* ff 54 24 d8 */
	if (FF2(2) && ((b[3] & 0xc0) == 0x80 || (b[3] & 0xc7) == 0x05))
		return 1;		/* ff 90+r d32, ff 15 rel32 */
	if (FF2(1) && (b[2] & 0xc0) == 0x80 && (b[2] & 0x07) == 4)
		return 1;		/* ff 94 24 d32 */
	return 0;
#undef FF2
}

static int ra_grow(struct mp_callsites *cs)
{
	size_t ncap = cs->ra_cap * 2;
	struct ra_slot *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < cs->ra_cap; i++) {
		size_t j;

		if (!cs->ra[i].tgid)
			continue;
		for (j = mix(cs->ra[i].tgid, cs->ra[i].addr) & (ncap - 1); n[j].tgid;
		     j = (j + 1) & (ncap - 1))
			;
		n[j] = cs->ra[i];
	}
	free(cs->ra);
	cs->ra = n;
	cs->ra_cap = ncap;
	return 0;
}

static int is_return_address(struct mp_callsites *cs, pid_t tid, pid_t tgid, uint64_t addr)
{
	uint8_t code[8];
	size_t j;
	int verdict;

	if (addr < 4096 || !mp_maps_is_code(cs->maps, tgid, addr))
		return 0;
	if (2 * (cs->ra_n + 1) > cs->ra_cap && ra_grow(cs))
		return 0;
	for (j = mix((uint64_t)tgid, addr) & (cs->ra_cap - 1); cs->ra[j].tgid;
	     j = (j + 1) & (cs->ra_cap - 1))
		if (cs->ra[j].tgid == (uint32_t)tgid && cs->ra[j].addr == addr)
			return cs->ra[j].is_ret;
	verdict = read_mem(tid, addr - 8, code, sizeof(code)) == 0 && ends_with_call(code);
	cs->ra[j] = (struct ra_slot){ .addr = addr, .tgid = (uint32_t)tgid,
				      .is_ret = (uint32_t)verdict };
	cs->ra_n++;
	return verdict;
}

void mp_callsites_forget(struct mp_callsites *cs, pid_t tgid)
{
	struct ra_slot *old = cs->ra;
	size_t cap = cs->ra_cap;

	if (cs->unwinder)
		mp_unwinder_forget(cs->unwinder, tgid);
	if (cs->checker)
		mp_unwinder_forget(cs->checker, tgid);

	/* Rebuild without tgid's entries: deleting in place would break the
	 * probe chains of the others. */
	cs->ra = calloc(cap, sizeof(*cs->ra));
	if (!cs->ra) {
		cs->ra = old;
		memset(cs->ra, 0, cap * sizeof(*cs->ra));
		cs->ra_n = 0;
		return;
	}
	cs->ra_n = 0;
	for (size_t i = 0; i < cap; i++) {
		size_t j;

		if (!old[i].tgid || old[i].tgid == (uint32_t)tgid)
			continue;
		for (j = mix(old[i].tgid, old[i].addr) & (cap - 1); cs->ra[j].tgid;
		     j = (j + 1) & (cap - 1))
			;
		cs->ra[j] = old[i];
		cs->ra_n++;
	}
	free(old);
}

/* Does the file name of path start with one of the n prefixes? */
static int name_starts_with(const char *path, const char *const *prefix, size_t n)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(base, prefix[i], strlen(prefix[i])))
			return 1;
	return 0;
}

/* Objects whose frames say nothing about the application: the C
 * library, the loader, and mrcache itself.  After the syscall's direct
 * caller (kept: it says "from malloc" or "from the loader"), their frames
 * are skipped so that the frames shown reach the application's code. */
int mp_object_is_system(const char *path)
{
	static const char *const sys[] = { "libc.so", "ld-linux", "libpthread.so",
					   "libmrcache", "libdl.so" };

	return name_starts_with(path, sys, sizeof(sys) / sizeof(sys[0]));
}

/* Appends the frame at addr unless it is a system frame after the first
 * caller; returns 1 when the site is full.  Every frame looked at, kept
 * or not, is folded into the call's owner. */
static int add_frame(struct mp_callsites *cs, pid_t tgid, struct mp_site *s, uint64_t addr,
		     struct mp_owner_fold *own)
{
	struct mp_frame *f = &s->frames[s->nframes];
	const char *path;

	if (mp_maps_lookup(cs->maps, tgid, addr, &f->obj, &f->vaddr) != 1)
		return 0;
	mp_owner_fold_add(own, mp_owner_of_frame(cs->owners, f->obj, f->vaddr));
	path = mp_trace_str(cs->t, f->obj);
	if (s->nframes >= 2 && mp_object_is_system(path))
		return 0;
	s->nframes++;
	return (int)s->nframes >= cs->depth;
}

/* The owner from unwound return addresses (exact). */
static enum mp_owner unwound_owner(struct mp_callsites *cs, pid_t tgid, const uint64_t *ret,
				   int n, int io)
{
	struct mp_owner_fold own;

	mp_owner_fold_init(&own);
	for (int i = 0; i < n; i++) {
		uint32_t obj;
		uint64_t vaddr;

		if (mp_maps_lookup(cs->maps, tgid, ret[i], &obj, &vaddr) == 1 &&
		    mp_owner_fold_add(&own, mp_owner_of_frame(cs->owners, obj, vaddr)))
			break;
	}
	return mp_owner_fold_end(&own, io);
}

uint32_t mp_callsite_get(struct mp_callsites *cs, pid_t tid, pid_t tgid,
			 uint64_t ip, uint64_t sp, int io, enum mp_owner *owner)
{
	struct mp_site s = { 0 };
	uint64_t stack[SCAN_WORDS > UNWIND_MAX ? SCAN_WORDS : UNWIND_MAX];
	struct mp_owner_fold own;
	int n;

	mp_owner_fold_init(&own);
	*owner = MP_OWN_PROGRAM;
	if (mp_maps_lookup(cs->maps, tgid, ip, &s.frames[0].obj, &s.frames[0].vaddr) < 0)
		return 0;
	s.nframes = 1;
	if (cs->depth > 1 && cs->unwinder) {
		n = mp_unwind(cs->unwinder, tgid, tid, ip, stack, UNWIND_MAX);
		*owner = unwound_owner(cs, tgid, stack, n, io);
		for (int i = 0; i < n && !add_frame(cs, tgid, &s, stack[i], &own); i++)
			;
		return site_intern(cs, &s);
	}
	/* The stack is scanned at -d 1 too: the owner needs the callers. */
	if ((n = read_stack(tid, sp, stack)) > 0) {
		for (int i = 0; cs->depth > 1 && i < n; i++)
			if (is_return_address(cs, tid, tgid, stack[i]) &&
			    add_frame(cs, tgid, &s, stack[i], &own))
				break;
		/* Past the frames shown, the owner may still be undecided. */
		for (int i = 0; i < n && own.owner == MP_OWN_SYSTEM; i++) {
			uint32_t obj;
			uint64_t vaddr;

			if (is_return_address(cs, tid, tgid, stack[i]) &&
			    mp_maps_lookup(cs->maps, tgid, stack[i], &obj, &vaddr) == 1)
				mp_owner_fold_add(&own, mp_owner_of_frame(cs->owners, obj, vaddr));
		}
	}
	*owner = mp_owner_fold_end(&own, io);
	if (*owner != MP_OWN_PROGRAM && (cs->checker || mp_unwinder_create(&cs->checker) == 0) &&
	    (n = mp_unwind(cs->checker, tgid, tid, ip, stack, UNWIND_MAX)) > 0)
		*owner = unwound_owner(cs, tgid, stack, n, io);
	return site_intern(cs, &s);
}
