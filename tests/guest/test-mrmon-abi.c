/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-abi: every ioctl field broken one at a time gives its
 * documented errno (docs/abi.md), and the same call with the field intact
 * succeeds (the control that the error comes from that field).
 */
#include <poll.h>
#include <stddef.h>
#include "mrmon_test.h"

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
	struct mrmon_handshake hs = { .abi_version = 999 };

	CHECK_EQ(hs_with(0, 0, 0), 0);
	CHECK_EQ(hs_with(offsetof(struct mrmon_handshake, flags), 1, 4), -EINVAL);
	CHECK_EQ(hs_with(offsetof(struct mrmon_handshake, pad), 1, 4), -EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(hs_with(offsetof(struct mrmon_handshake, reserved) + 8 * i, 1, 8), -EINVAL);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, &hs), -EPROTONOSUPPORT);
	CHECK_EQ(hs.abi_version, MRMON_ABI_VERSION);
	CHECK_EQ(mon_ioctl(fd, MRMON_IOC_HANDSHAKE, (void *)8), -EFAULT);
	CHECK_EQ(mon_ioctl(fd, _IOWR(MRMON_IOC_MAGIC, 99, struct mrmon_batch), &hs), -ENOTTY);
	CHECK_EQ(mon_ioctl(fd, _IOWR('T', 0, struct mrmon_batch), &hs), -ENOTTY);
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

static int watch_range(uint64_t start, uint64_t len, uint32_t flags, struct mrmon_range *out)
{
	struct mrmon_range r = { .start = start, .len = len, .flags = flags };
	int rc = batch_with(MRMON_IOC_WATCH, &r, 0, 0, 0);

	if (out)
		*out = r;
	return rc;
}

static int unwatch_entry(uint32_t slot, uint32_t flags, uint64_t expected)
{
	struct mrmon_unwatch_entry e = { .slot = slot, .flags = flags, .expected = expected };

	return batch_with(MRMON_IOC_UNWATCH, &e, 0, 0, 0);
}

static void check_batch(struct mrmon_handshake *hs, char *mem)
{
	struct mrmon_range r[2] = { { .start = (uintptr_t)mem, .len = PAGE } };
	struct mrmon_batch b = { .entries = (uintptr_t)r, .count = 2 };
	unsigned long cmds[2] = { MRMON_IOC_WATCH, MRMON_IOC_UNWATCH };

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
}

static void check_ranges(char *mem)
{
	struct mrmon_range r;

	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 1, NULL), -EINVAL);
	CHECK_EQ(watch_range((uintptr_t)mem, 0, 0, NULL), -EINVAL);
	CHECK_EQ(watch_range(~0ull - 100, 200, 0, NULL), -EINVAL);
	CHECK_EQ(watch_range(~0ull - 2 * PAGE, PAGE, 0, NULL), -EINVAL);	/* end rounds past 2^64 */
	CHECK_EQ(watch_range(1ull << 57, PAGE, 0, NULL), -EINVAL);		/* beyond TASK_SIZE */
	/* Rounded to pages; an unmapped range can be watched. */
	CHECK_EQ(watch_range((uintptr_t)mem + 10, 1, 0, &r), 0);
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected), 0);

	CHECK_EQ(watch_range((uintptr_t)mem, PAGE, 0, &r), 0);
	CHECK_EQ(unwatch_entry(4, 0, r.expected), -EINVAL);		/* slot >= nslots */
	CHECK_EQ(unwatch_entry(r.slot, 1, r.expected), -EINVAL);	/* flags */
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected + 2), -ESTALE);	/* generation */
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected & ~1ull), 0);	/* valid bit ignored */
	CHECK_EQ(unwatch_entry(r.slot, 0, r.expected), -ESTALE);	/* twice */
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
	for (int i = 0; i < 4; i++)
		CHECK_EQ(unwatch_entry(r[i].slot, 0, r[i].expected), 0);
	/* A fault while copying out turns into an overflow, not a loss. */
	p = mon_map_anon(2 * PAGE);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(watch_range((uintptr_t)p + i * PAGE, PAGE, 0, &r[i]), 0);
	munmap(p, 2 * PAGE);
	CHECK_EQ(hdr->pending, 2);
	CHECK(read(fd, bad_buffer, sizeof(ev)) < 0 && errno == EFAULT);
	CHECK_EQ(mon_events(&(struct mon){ .fd = fd }, ev, 8), 1);
	CHECK_EQ(ev[0].cause, MRMON_CAUSE_OVERFLOW);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(unwatch_entry(r[i].slot, 0, r[i].expected), 0);
	/* Still working. */
	p = mon_map_anon(5 * PAGE);
	CHECK_EQ(watch_range((uintptr_t)p + 4 * PAGE, PAGE, 0, &r[4]), 0);
	munmap(p + 4 * PAGE, PAGE);
	CHECK_EQ(mon_events(&(struct mon){ .fd = fd }, ev, 8), 1);
	CHECK_EQ(ev[0].slot, r[4].slot);
	CHECK_EQ(unwatch_entry(r[4].slot, 0, r[4].expected), 0);
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
	CHECK(hs.features & MRMON_FEATURE_EVENTS);
	CHECK_EQ(hs.event_size, sizeof(struct mrmon_event));
	CHECK_EQ(hs.header_size, PAGE);
	check_handshake();
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
