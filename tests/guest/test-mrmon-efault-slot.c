/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-efault-slot: a slot whose event a read() failed to copy out
 * (EFAULT) is not reused before its event has been read, as docs/mrmon.md
 * promises ("an event never names a slot a newer watch holds"), and the
 * event is not lost.  Two slots: watch pages A and B, unmap A (its event
 * queued), read() into a PROT_NONE buffer (EFAULT): a WATCH of page C must
 * then find no free slot (ENOSPC), since A's event is still queued; the
 * next read() gives A's event itself, after which C's WATCH gets A's
 * slot.  Before 75fea9a, mrmon_event_pop() had put the slot back before
 * the copy, and C's WATCH took A's slot at once, before user space was
 * told anything; 75fea9a parked it behind an OVERFLOW, which made user
 * space rescan every watch for one fault.  Control: the same with a
 * read() that succeeds: the event names A's slot and C's WATCH then
 * reuses it.
 */
#include <stdio.h>
#include "mrmon_test.h"

static void run(int fault)
{
	struct mrmon_event ev[4];
	uint32_t sa, sb, sc;
	uint64_t ea, eb, ec;
	char *p = mon_map_anon(3 * PAGE);
	void *bad = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct mon m;
	int n;

	CHECK(p != NULL && bad != MAP_FAILED);
	CHECK_EQ(mon_open(&m, 2, 4), 0);
	CHECK_EQ(mon_watch(&m, p, PAGE, 1, &sa, &ea), 0);
	CHECK_EQ(mon_watch(&m, p + PAGE, PAGE, 2, &sb, &eb), 0);
	CHECK_EQ(munmap(p, PAGE), 0);
	if (fault) {
		CHECK(read(m.fd, bad, sizeof(ev)) < 0 && errno == EFAULT);
		CHECK_EQ(mon_watch(&m, p + 2 * PAGE, PAGE, 3, &sc, &ec), -ENOSPC);
		CHECK_EQ(m.hdr->overflows, 0);
	}
	n = mon_events(&m, ev, 4);
	CHECK_EQ(n, 1);
	CHECK_EQ(ev[0].slot, sa);
	CHECK_EQ(ev[0].cookie, 1);
	CHECK_EQ(mon_watch(&m, p + 2 * PAGE, PAGE, 3, &sc, &ec), 0);
	CHECK_EQ(sc, sa);
	CHECK(mon_valid(&m, sb, eb));
	printf("%s: after the event was read, WATCH reused slot %u\n",
	       fault ? "EFAULT first" : "control", sc);
	mon_close(&m);
	munmap(p + PAGE, 2 * PAGE);
	munmap(bad, PAGE);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	run(0);
	run(1);
	return test_result();
}
