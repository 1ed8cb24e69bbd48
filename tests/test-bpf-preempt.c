/* SPDX-License-Identifier: MIT */
/* Which kernels the bpf monitor refuses (lib/monitor/bpf/preempt.c): those
 * that can preempt a tracing program, and then skip it for every other
 * task on that CPU.  The decision from uname -v, /sys/kernel/realtime,
 * debugfs's sched/preempt and the command line, for the kernels Debian
 * ships and the modes a dynamic kernel can boot in.  Negative control:
 * Debian's own non-RT kernels (voluntary by default) are not refused. */
#include <string.h>
#include "monitor/bpf/bpf.h"
#include "testutil.h"

#define DEB612 "#1 SMP PREEMPT_DYNAMIC Debian 6.12.57-1 (2025-11-05)"
#define DEB61 "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)"
#define RT612 "#1 SMP PREEMPT_RT Debian 6.12.57-1 (2025-11-05)"

static int refused(const char *v, const char *rt, const char *sched, const char *cmdline)
{
	return mrc_bpf_preempt_decide(v, rt, sched, cmdline) != NULL;
}

int main(void)
{
	/* RT, by its uname or by /sys/kernel/realtime alone */
	CHECK(refused(RT612, "", "", ""));
	CHECK(refused("#1 SMP Debian", "1\n", "", ""));
	/* CONFIG_PREEMPT without the dynamic switch */
	CHECK(refused("#1 SMP PREEMPT Fri Jan 1", "", "", ""));
	/* dynamic: the mode in force, from debugfs, else the command line */
	CHECK(refused(DEB612, "", "none voluntary (full) lazy\n", ""));
	CHECK(refused(DEB612, "", "none voluntary full (lazy)\n", ""));
	CHECK(!refused(DEB612, "", "none (voluntary) full lazy\n", "preempt=full"));
	CHECK(refused(DEB612, "", "", "BOOT_IMAGE=/vmlinuz preempt=full quiet"));
	CHECK(refused(DEB61, "", "", "preempt=lazy"));
	/* the negative control: Debian's kernels as they boot */
	CHECK(!refused(DEB612, "", "", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet"));
	CHECK(!refused(DEB61, "0\n", "", ""));
	CHECK(!refused(DEB612, "", "none (voluntary) full\n", ""));
	CHECK(!refused("#1 SMP Debian", "", "", ""));
	/* words, not substrings */
	CHECK(!refused(DEB612, "", "", "xpreempt=full"));
	CHECK(!refused("#1 SMP PREEMPT_DYNAMICS", "", "", ""));
	return test_result();
}
