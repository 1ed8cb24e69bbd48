/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-mm-cap: max_watches_per_mm bounds the watches of one address
 * space across all its descriptors, whatever RLIMIT_MEMLOCK allows (RDMA
 * clusters often run with it unlimited, and CAP_IPC_LOCK is exempt from
 * it): with the parameter lowered to CAP, two descriptors of one process
 * together get CAP watches and the next WATCH is EDQUOT; after an
 * UNWATCH one more fits; a forked child's own descriptor has a budget of
 * its own (the control: the limit is per address space, not global); the
 * count goes back to zero when the descriptors close.  The parameter is
 * restored at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "mrmon_test.h"
#include "mrmon_priv.h"

#define CAP 100
#define PARAM "/sys/module/mrmon/parameters/max_watches_per_mm"

static int watch_n(struct mon *m, const char *p, int n, uint32_t *slot, uint64_t *exp)
{
	for (int i = 0; i < n; i++) {
		int rc = mon_watch(m, p + (i % 16) * PAGE, PAGE, i, &slot[i], &exp[i]);

		if (rc)
			return rc;
	}
	return 0;
}

static void in_one_mm(const char *p)
{
	static uint32_t slot[2][CAP];
	static uint64_t exp[2][CAP];
	struct mon a, b;
	uint32_t s;
	uint64_t e;

	CHECK_EQ(mon_open(&a, CAP, 4), 0);
	CHECK_EQ(mon_open(&b, CAP, 4), 0);
	CHECK_EQ(watch_n(&a, p, CAP / 2, slot[0], exp[0]), 0);
	CHECK_EQ(watch_n(&b, p, CAP / 2, slot[1], exp[1]), 0);
	CHECK_EQ(mon_watch(&a, p, PAGE, 0, &s, &e), -EDQUOT);
	CHECK_EQ(mon_watch(&b, p, PAGE, 0, &s, &e), -EDQUOT);
	CHECK_EQ(mon_unwatch(&b, slot[1][0], exp[1][0]), 0);
	CHECK_EQ(mon_watch(&a, p, PAGE, 0, &slot[1][0], &exp[1][0]), 0);
	CHECK_EQ(mon_watch(&a, p, PAGE, 0, &s, &e), -EDQUOT);
	mon_close(&a);
	mon_close(&b);
	/* All given back: a full budget again. */
	CHECK_EQ(mon_open(&a, CAP, 4), 0);
	CHECK_EQ(watch_n(&a, p, CAP, slot[0], exp[0]), 0);
	CHECK_EQ(mon_watch(&a, p, PAGE, 0, &s, &e), -EDQUOT);
	mon_close(&a);
}

int main(void)
{
	char old[32] = "";
	char *p;
	FILE *f;
	pid_t pid;

	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing: load kmod/mrmon.ko");
	f = fopen(PARAM, "r");
	if (!f || !fgets(old, sizeof(old), f))
		SKIP("%s unreadable", PARAM);
	fclose(f);
	p = mon_map_anon(16 * PAGE);
	CHECK(p != NULL);
	CHECK_EQ(priv_write(PARAM, "100\n"), 0);
	in_one_mm(p);
	/* The control: a parent holding its whole budget leaves a child's
	 * own budget untouched. */
	{
		static uint32_t slot[CAP];
		static uint64_t exp[CAP];
		struct mon m;

		CHECK_EQ(mon_open(&m, CAP, 4), 0);
		CHECK_EQ(watch_n(&m, p, CAP, slot, exp), 0);
		pid = fork();
		if (pid == 0) {
			in_one_mm(p);
			_exit(test_result());
		}
		CHECK(pid > 0);
		CHECK_EQ(mon_child_status(pid), 0);
		mon_close(&m);
	}
	CHECK_EQ(priv_write(PARAM, old), 0);
	return test_result();
}
