/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-abi: every ioctl field broken one at a time gives its
 * documented errno (docs/abi.md), and the same call with the field intact
 * succeeds (the control that the error comes from that field).  ABI 3:
 * magic 0xBB (ABI 1's 0xB7 commands are unknown), output fields must be
 * zero on input (HANDSHAKE's outputs, a WATCH entry's slot and expected),
 * WATCH has no flags (ABI 2's SNAPSHOT is EINVAL), REVALIDATE is
 * EOPNOTSUPP whatever its argument (EPERM from another mm), an ABI-2
 * handshake is EPROTONOSUPPORT with the module's version written back, an
 * unknown command is ENOTTY even from another mm (before EPERM), and a
 * 32-bit caller gets ENOTTY.
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include "mrmon_test.h"

/* ABI 1's magic: its commands must be unknown now. */
#define ABI1_MAGIC	0xB7
#define MAX_BATCH_DEFAULT 1024

static int fd;
/* Not a user address; volatile keeps the compiler from checking it. */
static void *volatile bad_buffer = (void *)8;

static int hs_with(size_t off, uint64_t val, size_t width)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };

	if (width)
		memcpy((char *)&hs + off, &val, width);
	return mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs);
}

static void check_handshake(void)
{
	static const struct { size_t off, width; } outputs[] = {
		{ offsetof(struct mrmon_handshake, features), 8 },
		{ offsetof(struct mrmon_handshake, max_slots), 4 },
		{ offsetof(struct mrmon_handshake, max_events), 4 },
		{ offsetof(struct mrmon_handshake, max_batch), 4 },
		{ offsetof(struct mrmon_handshake, header_size), 4 },
		{ offsetof(struct mrmon_handshake, event_size), 4 },
	};
	struct mrmon_handshake hs = { .abi_version = 999 };

	CHECK_EQ(hs_with(0, 0, 0), 0);
	CHECK_EQ(hs_with(offsetof(struct mrmon_handshake, flags), 1, 4), -EINVAL);
	CHECK_EQ(hs_with(offsetof(struct mrmon_handshake, pad), 1, 4), -EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(hs_with(offsetof(struct mrmon_handshake, reserved) + 8 * i, 1, 8), -EINVAL);
	/* Outputs are zero on input, so they can become inputs later. */
	for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++)
		CHECK_EQ(hs_with(outputs[i].off, 1, outputs[i].width), -EINVAL);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), -EPROTONOSUPPORT);
	CHECK_EQ(hs.abi_version, MRMON_ABI_VERSION);
	hs = (struct mrmon_handshake){ .abi_version = 1 };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), -EPROTONOSUPPORT);
	CHECK_EQ(hs.abi_version, 3);
	/* An ABI-2 library (REVALIDATE, SNAPSHOT) is told, not half served. */
	hs = (struct mrmon_handshake){ .abi_version = 2 };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), -EPROTONOSUPPORT);
	CHECK_EQ(hs.abi_version, 3);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, (void *)8), -EFAULT);
	CHECK_EQ(mon_ioctl(fd, _IOWR(MRMON_IOC_MAGIC, 99, struct mrmon_batch), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR(MRMON_IOC_MAGIC, 5, struct mrmon_batch), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR('T', 0, struct mrmon_batch), &hs), -ENOTTY);
	/* ABI 1's commands, valid arguments and all: unknown.  The same
	 * struct under magic 0xBB is the control. */
	hs = (struct mrmon_handshake){ .abi_version = MRMON_ABI_VERSION };
	CHECK_EQ(mon_ioctl(fd, _IOWR(ABI1_MAGIC, 0, struct mrmon_handshake), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR(0xBB, 0, struct mrmon_handshake), &hs), 0);
}

/* An ioctl through the 32-bit system call entry (int $0x80: ia32 ioctl is
 * 54), as a 32-bit process makes it; the argument must be below 4 GiB.
 * Returns 0 or -errno, as the kernel does. */
static int ia32_ioctl(int dfd, uint32_t cmd, uint32_t arg)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54), "b"(dfd), "c"(cmd), "d"(arg)
			 : "memory", "r8", "r9", "r10", "r11");
	return (int)ret;
}

static sigjmp_buf ia32_missing;

static void no_ia32(int sig)
{
	siglongjmp(ia32_missing, 1);
}

/* The ABI is 64-bit only: every command from a 32-bit caller is ENOTTY.
 * Controls: the same call through the 64-bit entry works, and a generic
 * ioctl (FIONCLEX) through the 32-bit entry reaches the descriptor. */
static void check_compat(void)
{
	struct mrmon_handshake *hs = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	uint32_t arg = (uint32_t)(uintptr_t)hs;
	int rc;

	CHECK(hs != MAP_FAILED && (uintptr_t)hs < (1ull << 32));
	if (hs == MAP_FAILED)
		return;
	/* A kernel without ia32 emulation answers int $0x80 with SIGSEGV. */
	signal(SIGSEGV, no_ia32);
	rc = sigsetjmp(ia32_missing, 1) ? -ENOSYS : ia32_ioctl(fd, FIONCLEX, 0);
	signal(SIGSEGV, SIG_DFL);
	if (rc == -ENOSYS) {
		printf("no 32-bit system calls in this kernel: compat check skipped\n");
		munmap(hs, PAGE);
		return;
	}
	printf("32-bit entry reaches the descriptor (FIONCLEX): compat checks run\n");
	CHECK_EQ(rc, 0);
	CHECK_EQ(fcntl(fd, F_GETFD), 0);
	CHECK_EQ(ia32_ioctl(fd, FIOCLEX, 0), 0);
	CHECK_EQ(fcntl(fd, F_GETFD), FD_CLOEXEC);
	*hs = (struct mrmon_handshake){ .abi_version = MRMON_ABI_VERSION };
	CHECK_EQ(ia32_ioctl(fd, MRMON_IOC_HANDSHAKE, arg), -ENOTTY);
	CHECK_EQ(hs->features, 0);
	CHECK_EQ(ia32_ioctl(fd, MRMON_IOC_WATCH, arg), -ENOTTY);
	CHECK_EQ(ia32_ioctl(fd, MRMON_IOC_REVALIDATE, arg), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, hs), 0);
	CHECK_EQ(hs->features, MRMON_FEATURE_EVENTS | MRMON_FEATURE_BATCH);
	munmap(hs, PAGE);
}

/* A forked child (another mm): an unknown command is ENOTTY there too,
 * before the owner check; a known one is EPERM (the control that the
 * child is refused at all). */
static int foreign_child(void)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	struct mrmon_unwatch_entry e = { 0 };
	struct mrmon_batch b = { .entries = (uintptr_t)&e, .count = 1 };

	CHECK_EQ(mon_ioctl(fd, _IOWR(MRMON_IOC_MAGIC, 99, struct mrmon_batch), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR(MRMON_IOC_MAGIC, 5, struct mrmon_batch), &b), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR(ABI1_MAGIC, 0, struct mrmon_handshake), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR('T', 0, struct mrmon_batch), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), -EPERM);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_REVALIDATE, &b), -EPERM);
	return test_result();
}

static void check_foreign(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(foreign_child());
	CHECK(pid > 0);
	CHECK_EQ(mon_child_status(pid), 0);
}

static int setup_with(size_t off, uint64_t val, size_t width)
{
	struct mrmon_setup su = { .nslots = 4, .nevents = 4 };

	memcpy((char *)&su + off, &val, width);
	return mon_ioctl(fd, MRMON_IOC_SETUP, &su);
}

static void check_before_setup(void)
{
	struct mrmon_range r = { .start = 4096, .len = 4096 };
	struct mrmon_batch b = { .entries = (uintptr_t)&r, .count = 1 };
	struct mrmon_event ev;

	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_WATCH, &b), -EBADFD);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_UNWATCH, &b), -EBADFD);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_REVALIDATE, &b), -EOPNOTSUPP);
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EBADFD);
	CHECK(read(fd, &ev, sizeof(ev)) < 0 && errno == EBADFD);
}

static void check_setup(struct mrmon_handshake *hs)
{
	struct mrmon_setup su = { .nslots = 4, .nevents = 2 };

	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, flags), 1, 4), -EINVAL);
	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, pad), 1, 4), -EINVAL);
	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, map_size), 1, 8), -EINVAL);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(setup_with(offsetof(struct mrmon_setup, reserved) + 8 * i, 1, 8), -EINVAL);
	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, nslots), 0, 4), -EINVAL);
	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, nslots), hs->max_slots + 1ull, 4), -EINVAL);
	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, nevents), 0, 4), -EINVAL);
	CHECK_EQ(setup_with(offsetof(struct mrmon_setup, nevents), hs->max_events + 1ull, 4), -EINVAL);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_SETUP, (void *)8), -EFAULT);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_SETUP, &su), 0);
	CHECK_EQ(su.map_size, 2 * PAGE);
	su.map_size = 0;
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_SETUP, &su), -EBUSY);
}

static void check_mmap(void)
{
	void *p;

	CHECK(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EPERM);
	CHECK(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) == MAP_FAILED && errno == EPERM);
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, PAGE) == MAP_FAILED && errno == EINVAL);
	CHECK(mmap(NULL, 3 * PAGE, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == EINVAL);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		return;
	CHECK(mprotect(p, PAGE, PROT_READ | PROT_WRITE) < 0 && errno == EACCES);
	CHECK(mremap(p, 2 * PAGE, 4 * PAGE, 0) == MAP_FAILED);
	munmap(p, 2 * PAGE);
}

static int batch_with(unsigned long cmd, void *entries, size_t off, uint64_t val, size_t width)
{
	struct mrmon_batch b = { .entries = (uintptr_t)entries, .count = 1 };

	if (width)
		memcpy((char *)&b + off, &val, width);
	return mon_ioctl(fd, cmd, &b);
}

/* WATCH one entry as given (slot and expected too); *r gets the outputs. */
static int watch_entry(struct mrmon_range *r)
{
	return batch_with(MRMON_IOC_WATCH, r, 0, 0, 0);
}

static int watch_range(uint64_t start, uint64_t len, uint32_t flags, struct mrmon_range *out)
{
	struct mrmon_range r = { .start = start, .len = len, .flags = flags };
	int rc = watch_entry(&r);

	if (out)
		*out = r;
	return rc;
}

static int unwatch_entry(uint32_t slot, uint32_t flags, uint64_t expected)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .flags = flags, .expected = expected };

	return batch_with(MRMON_IOC_UNWATCH, &e, 0, 0, 0);
}

/* count = max_batch is accepted: each batch runs until its first entry
 * fails for that entry's own reason (nslots = 4 here). */
static void check_max_batch(struct mrmon_handshake *hs, char *mem)
{
	struct mrmon_range *r = calloc(hs->max_batch, sizeof(*r));
	struct mrmon_unwatch_entry *u = calloc(hs->max_batch, sizeof(*u));
	struct mrmon_batch b = { .entries = (uintptr_t)r, .count = hs->max_batch };

	CHECK(r && u);
	if (!r || !u)
		return;
	for (uint32_t i = 0; i < hs->max_batch; i++)
		r[i] = (struct mrmon_range){ .start = (uintptr_t)mem, .len = PAGE };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_WATCH, &b), -ENOSPC);
	CHECK_EQ(b.done, 4);
	for (uint32_t i = 0; i < 4; i++)
		u[i] = (struct mrmon_unwatch_entry){ .slot = r[i].slot, .expected = r[i].expected };
	/* u[4] and on name slot 0 with generation 0: stale. */
	b = (struct mrmon_batch){ .entries = (uintptr_t)u, .count = hs->max_batch };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_REVALIDATE, &b), -EOPNOTSUPP);
	CHECK_EQ(b.done, 0);
	b = (struct mrmon_batch){ .entries = (uintptr_t)u, .count = hs->max_batch };
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_UNWATCH, &b), -ESTALE);
	CHECK_EQ(b.done, 4);
	free(r);
	free(u);
}

static void check_batch(struct mrmon_handshake *hs, char *mem)
{
	struct mrmon_range r[2] = { { .start = (uintptr_t)mem, .len = PAGE } };
	struct mrmon_batch b = { .entries = (uintptr_t)r, .count = 2 };
	unsigned long cmds[2] = { MRMON_IOC_WATCH, MRMON_IOC_UNWATCH };

	CHECK_EQ(hs->max_batch, MAX_BATCH_DEFAULT);
	CHECK_EQ(batch_with(MRMON_IOC_REVALIDATE, r, offsetof(struct mrmon_batch, flags), 1, 4),
		 -EOPNOTSUPP);
	for (int c = 0; c < 2; c++) {
		CHECK_EQ(batch_with(cmds[c], r, offsetof(struct mrmon_batch, flags), 1, 4), -EINVAL);
		CHECK_EQ(batch_with(cmds[c], r, offsetof(struct mrmon_batch, pad), 1, 4), -EINVAL);
		CHECK_EQ(batch_with(cmds[c], r, offsetof(struct mrmon_batch, done), 1, 4), -EINVAL);
		for (int i = 0; i < 2; i++)
			CHECK_EQ(batch_with(cmds[c], r, offsetof(struct mrmon_batch, reserved) + 8 * i, 1, 8), -EINVAL);
		CHECK_EQ(batch_with(cmds[c], r, offsetof(struct mrmon_batch, count), 0, 4), -EINVAL);
		CHECK_EQ(batch_with(cmds[c], r, offsetof(struct mrmon_batch, count), hs->max_batch + 1ull, 4), -EINVAL);
		CHECK_EQ(batch_with(cmds[c], (void *)8, 0, 0, 0), -EFAULT);
	}
	/* A batch stops at its first bad entry; those before it stay. */
	r[1].len = 0;
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_WATCH, &b), -EINVAL);
	CHECK_EQ(b.done, 1);
	CHECK(r[0].expected & MRMON_WORD_VALID);
	CHECK_EQ(unwatch_entry(r[0].slot, 0, r[0].expected), 0);
	check_max_batch(hs, mem);
}

static void check_ranges(char *mem)
{
	struct mrmon_range r;
	uint64_t e;

	/* No flags (bit 0 was ABI 2's SNAPSHOT); the control takes a slot,
	 * given back. */
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 0, &r), 0);
	CHECK(r.expected & MRMON_WORD_VALID);
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected), 0);
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 1, NULL), -EINVAL);
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 2, NULL), -EINVAL);
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 1u << 31, NULL), -EINVAL);
	/* slot and expected are outputs: zero on input. */
	r = (struct mrmon_range){ .start = (uintptr_t)mem, .len = PAGE, .slot = 1 };
	CHECK_EQ(watch_entry(&r), -EINVAL);
	r = (struct mrmon_range){ .start = (uintptr_t)mem, .len = PAGE, .expected = 3 };
	CHECK_EQ(watch_entry(&r), -EINVAL);
	r = (struct mrmon_range){ .start = (uintptr_t)mem, .len = PAGE, .cookie = ~0ull };
	CHECK_EQ(watch_entry(&r), 0);
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected), 0);
	CHECK_EQ(watch_range((uintptr_t)mem, 0, 0, NULL), -EINVAL);
	CHECK_EQ(watch_range(~0ull - 100, 200, 0, NULL), -EINVAL);
	CHECK_EQ(watch_range(~0ull - 2 * PAGE, PAGE, 0, NULL), -EINVAL);	/* end rounds past 2^64 */
	CHECK_EQ(watch_range(1ull << 57, PAGE, 0, NULL), -EINVAL);		/* beyond TASK_SIZE */
	/* Rounded to pages; an unmapped range can be watched. */
	CHECK_EQ(watch_range((uintptr_t)mem + 10, 1, 0, &r), 0);
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected), 0);

	/* UNWATCH entries: slot, flags, generation. */
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 0, &r), 0);
	e = r.expected;
	CHECK_EQ(unwatch_entry(4, 0, e), -EINVAL);			/* slot >= nslots */
	CHECK_EQ(unwatch_entry(~0u, 0, e), -EINVAL);
	CHECK_EQ(unwatch_entry(r.slot, 1, e), -EINVAL);			/* flags */
	CHECK_EQ(unwatch_entry(r.slot, 0, e + 2), -ESTALE);		/* generation */
	CHECK_EQ(unwatch_entry(r.slot, 0, e - 2), -ESTALE);
	CHECK_EQ(unwatch_entry((r.slot + 1) % 4, 0, 3), -ESTALE);	/* no watch there */
	CHECK_EQ(unwatch_entry(r.slot, 0, e), 0);			/* control */
	CHECK_EQ(unwatch_entry(r.slot, 0, e), -ESTALE);			/* gone */
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 0, &r), 0);
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected & ~1ull), 0);	/* valid bit ignored */
}

static void check_full(char *mem)
{
	struct mrmon_range r[5];

	for (int i = 0; i < 4; i++)
		CHECK_EQ(watch_range((uintptr_t)mem + i * PAGE, PAGE, 0, &r[i]), 0);
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 0, NULL), -ENOSPC);
	CHECK_EQ(unwatch_entry(r[2].slot, 0, r[2].expected), 0);
	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 0, &r[4]), 0);
	CHECK_EQ(r[4].slot, r[2].slot);
	CHECK(r[4].expected != r[2].expected);
	CHECK_EQ(unwatch_entry(r[2].slot, 0, r[2].expected), -ESTALE);	/* reused */
	for (int i = 0; i < 5; i++)
		if (i != 2)
			CHECK_EQ(unwatch_entry(r[i].slot, 0, r[i].expected), 0);
}

/* nevents = 2: five invalidations give one OVERFLOW event, then the two
 * queued ones; the descriptor keeps working afterwards. */
static void check_events(void)
{
	struct mrmon_event ev[8];
	struct mrmon_range r[5];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	const struct mrmon_header *hdr;
	char *p = mon_map_anon(5 * PAGE);

	hdr = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(hdr != MAP_FAILED && p != NULL);
	if (hdr == MAP_FAILED || !p)
		return;
	CHECK(read(fd, ev, sizeof(ev[0]) - 1) < 0 && errno == EINVAL);
	CHECK(read(fd, ev, sizeof(ev)) < 0 && errno == EAGAIN);
	CHECK_EQ(poll(&pfd, 1, 0), 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(watch_range((uintptr_t)p + i * PAGE, PAGE, 0, &r[i]), 0);
	munmap(p, 4 * PAGE);
	CHECK_EQ(hdr->invalidations, 4);
	CHECK_EQ(hdr->overflows, 2);
	CHECK_EQ(hdr->pending, 3);
	CHECK_EQ(poll(&pfd, 1, 0), 1);
	CHECK_EQ(mon_events(&(struct mon){ .fd = fd }, ev, 8), 3);
	CHECK_EQ(ev[0].cause, MRMON_CAUSE_OVERFLOW);
	CHECK_EQ(ev[0].slot, ~0u);
	CHECK_EQ(ev[1].cause, MRMON_CAUSE_UNMAP);
	CHECK_EQ(ev[2].cause, MRMON_CAUSE_UNMAP);
	CHECK_EQ(hdr->pending, 0);
	CHECK_EQ(mon_events(&(struct mon){ .fd = fd }, ev, 8), 0);
	/* Invalidated watches are gone (ABI 3). */
	for (int i = 0; i < 4; i++)
		CHECK_EQ(unwatch_entry(r[i].slot, 0, r[i].expected), -ESTALE);
	/* A fault while copying out loses nothing: the events stay queued. */
	p = mon_map_anon(2 * PAGE);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(watch_range((uintptr_t)p + i * PAGE, PAGE, 0, &r[i]), 0);
	munmap(p, 2 * PAGE);
	CHECK_EQ(hdr->pending, 2);
	CHECK(read(fd, bad_buffer, sizeof(ev)) < 0 && errno == EFAULT);
	CHECK_EQ(hdr->pending, 2);
	CHECK_EQ(hdr->overflows, 2);
	CHECK_EQ(mon_events(&(struct mon){ .fd = fd }, ev, 8), 2);
	/* In the tree's order, not the addresses'. */
	CHECK((ev[0].slot == r[0].slot && ev[1].slot == r[1].slot) ||
	      (ev[0].slot == r[1].slot && ev[1].slot == r[0].slot));
	for (int i = 0; i < 2; i++)
		CHECK_EQ(unwatch_entry(r[i].slot, 0, r[i].expected), -ESTALE);
	/* Still working. */
	p = mon_map_anon(5 * PAGE);
	CHECK_EQ(watch_range((uintptr_t)p + 4 * PAGE, PAGE, 0, &r[4]), 0);
	munmap(p + 4 * PAGE, PAGE);
	CHECK_EQ(mon_events(&(struct mon){ .fd = fd }, ev, 8), 1);
	CHECK_EQ(ev[0].slot, r[4].slot);
	CHECK_EQ(unwatch_entry(r[4].slot, 0, r[4].expected), -ESTALE);
	munmap((void *)hdr, PAGE);
}

int main(void)
{
	struct mrmon_handshake hs = { .abi_version = MRMON_ABI_VERSION };
	char *mem = mon_map_anon(4 * PAGE);

	fd = open("/dev/mrmon", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		SKIP("/dev/mrmon missing");
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), 0);
	CHECK_EQ(hs.abi_version, 3);
	CHECK_EQ(hs.features, MRMON_FEATURE_EVENTS | MRMON_FEATURE_BATCH);
	CHECK(!(hs.features & 1ull << 3));	/* ABI 2's REVALIDATE, never again */
	CHECK(!(hs.features & 1ull << 2));	/* ABI 1's PFN_CHECK, never again */
	CHECK_EQ(hs.max_slots, 65536);		/* the default */
	CHECK_EQ(hs.event_size, sizeof(struct mrmon_event));
	CHECK_EQ(hs.header_size, PAGE);
	check_handshake();
	check_compat();
	check_foreign();
	check_before_setup();
	check_setup(&hs);
	check_mmap();
	check_batch(&hs, mem);
	check_ranges(mem);
	check_full(mem);
	check_events();
	close(fd);
	return test_result();
}
