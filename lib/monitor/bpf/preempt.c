/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/preempt.c - whether the kernel can preempt the
 * monitor's programs, which makes it skip them.
 *
 * A tracing program's trampoline counts, per CPU, the runs of that
 * program in progress (prog->active), and skips the program when the
 * count is not 1: that is how the kernel stops a program from recursing
 * into itself.  The trampoline only disables migration, so where the
 * kernel preempts anywhere (PREEMPT_RT, or preemption "full"), a task
 * preempted inside the program leaves the count at 1 on its CPU, and
 * another task's munmap on that CPU finds it taken: the program is
 * skipped (bpftool's recursion_misses), that unmap clears no word, and
 * the cache hands out the old pages.  Seen in tests/test-stale-threads
 * (bpf, signal variant) on 6.12-rt: 5-11 stale of about 450 checks per
 * 2 s run.  Under "none" or "voluntary" preemption a program runs to its
 * end once started (it has no preemption point), and the count means
 * recursion only.
 *
 * So the monitor refuses such kernels: -EOPNOTSUPP, with the reason.
 * MRCACHE_BPF_PREEMPTIBLE_OK (a boolean, read as the library's others
 * are) starts it anyway: the suites' negative control, to show the stale
 * pages.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include "common/env.h"
#include "monitor/bpf/bpf.h"

/* The first line of a file, or "" (absent, unreadable). */
static void read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = 0;
		fclose(f);
	}
}

/* Whether `word` is in `s` as a whole word (separated by blanks or ends). */
static int has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
		if ((p == s || p[-1] == ' ') && (!p[n] || p[n] == ' ' || p[n] == '\n'))
			return 1;
	return 0;
}

const char *mrc_bpf_preempt_decide(const char *uname_version, const char *realtime,
				   const char *sched_preempt, const char *cmdline)
{
	if (realtime[0] == '1' || has_word(uname_version, "PREEMPT_RT"))
		return "a PREEMPT_RT kernel";
	if (has_word(uname_version, "PREEMPT"))
		return "a kernel built with full preemption (CONFIG_PREEMPT)";
	if (!has_word(uname_version, "PREEMPT_DYNAMIC"))
		return NULL;
	/* debugfs, when mounted and readable, names the mode in force:
	 * "none voluntary (full) lazy" */
	if (sched_preempt[0])
		return strstr(sched_preempt, "(full)") || strstr(sched_preempt, "(lazy)") ?
		       "preemption \"full\" or \"lazy\" (sched/preempt in debugfs)" : NULL;
	if (has_word(cmdline, "preempt=full") || has_word(cmdline, "preempt=lazy"))
		return "preemption \"full\" or \"lazy\" (the kernel command line)";
	return NULL;
}

int mrc_bpf_preemptible(void)
{
	char realtime[8], sched[128], cmdline[4096];
	const char *why;
	struct utsname u;
	int ok = 0;

	if (uname(&u))
		return 0;
	read_line("/sys/kernel/realtime", realtime, sizeof(realtime));
	read_line("/sys/kernel/debug/sched/preempt", sched, sizeof(sched));
	read_line("/proc/cmdline", cmdline, sizeof(cmdline));
	why = mrc_bpf_preempt_decide(u.version, realtime, sched, cmdline);
	if (!why)
		return 0;
	if (mrc_env_bool("MRCACHE_BPF_PREEMPTIBLE_OK", &ok) == 0 && ok) {
		mrc_log(0, "monitor bpf: %s can preempt the programs, and then skips them for "
			"other tasks (stale registrations); started anyway: "
			"MRCACHE_BPF_PREEMPTIBLE_OK=1", why);
		return 0;
	}
	mrc_log(0, "monitor bpf: not on %s: the kernel can preempt a tracing program there, "
		"and skips it for every other task on that CPU meanwhile (recursion_misses), "
		"so an unmap would clear no word (docs/monitors-bpf.md, \"Preemptible "
		"kernels\"); use the kernel monitor", why);
	return 1;
}
