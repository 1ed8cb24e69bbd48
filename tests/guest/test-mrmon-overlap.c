/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-overlap: the worst invalidation an unprivileged user can
 * build with the default module parameters is short.  As uid 65534, with
 * the Linux default RLIMIT_MEMLOCK (8 MiB), then again with it unlimited
 * (as RDMA clusters set it: then max_watches_per_mm is the bound), and
 * RLIMIT_NOFILE 1024, watch
 * one THP-backed 4 MiB range as many times as the module accepts (ENOSPC:
 * open another descriptor; ENOMEM: the user's charge is spent; EDQUOT:
 * the address space holds max_watches_per_mm; at most
 * 2^20 watches), then time one MADV_DONTNEED of the range: under 100 ms
 * in the TCG guest (a time between the bound and ten times it is measured
 * again, at most twice), and the kernel log gains no soft-lockup,
 * RCU-stall or hung-task report.  It also times an munmap of one page (a huge-page
 * split: CLEAR to every watch, then UNMAP), printed only.
 *
 * Regression test for issue 13, defect 2: on 1682920 nothing bounded the
 * watches overlapping a range (no memory charge, max_slots 2^20) and a
 * CLEAR walked up to 1,024 page-table entries per watch with interrupts
 * off: 2^20 watches made one MADV_DONTNEED take 42.5 s with a soft lockup.
 *
 * Controls: every word is invalid after the timed MADV_DONTNEED (the
 * callbacks all ran inside it), and a record written to /dev/kmsg with the
 * words the scan looks for is found by it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include "mrmon_test.h"
#include "mrmon_priv.h"

#define RANGE		(4ul << 20)
#define HUGE		(2ul << 20)
#define CAP		(1u << 20)
#define MAX_DESCS	1000		/* of RLIMIT_NOFILE 1024 */
/* The bound on one MADV_DONTNEED over every watch, times
 * MRMON_TIME_SCALE: a debug kernel (KASAN, lockdep) runs the same bounded
 * work several times slower (check-guest-debug sets it). */
#define BOUND_S		(0.100 * time_scale())

static double time_scale(void)
{
	const char *v = getenv("MRMON_TIME_SCALE");
	double s = v ? atof(v) : 1;

	return s >= 1 ? s : 1;
}

static const char *const stall_words[] = {
	"soft lockup", "self-detected stall", "detected stall", "RCU stall",
	"hung_task", "blocked for more than", NULL
};

/* AnonHugePages of the mapping that starts at p, in kB, or -1. */
static long huge_kb(const void *p)
{
	char line[256], want[32];
	long kb = -1, v;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	snprintf(want, sizeof(want), "%lx-", (unsigned long)p);
	while (f && fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') > strchr(line, '-'))
			in = !strncmp(line, want, strlen(want));
		else if (in && sscanf(line, "AnonHugePages: %ld", &v) == 1)
			kb = v;
	}
	if (f)
		fclose(f);
	return kb;
}

/* A 2 MiB-aligned, THP-backed, touched range. */
static char *range_map(void)
{
	char *raw;

	return mon_map_window(RANGE, 1, &raw);
}

/* Fills descriptors with watches of the range until the module refuses;
 * returns the number of watches, *ndesc the descriptors used. */
static uint32_t watches_make(struct mon *m, int *ndesc, const char *p)
{
	static struct mrmon_range r[1024];
	struct mon probe;
	uint32_t total = 0, batch;
	int rc = mon_open(&probe, 1, 1);

	*ndesc = 0;
	CHECK_EQ(rc, 0);
	if (rc)
		return 0;
	batch = probe.hs.max_batch < 1024 ? probe.hs.max_batch : 1024;
	printf("module: max_slots %u, max_batch %u\n", probe.hs.max_slots, probe.hs.max_batch);
	mon_close(&probe);
	while (total < CAP && *ndesc < MAX_DESCS) {
		uint32_t want = CAP - total < probe.hs.max_slots ? CAP - total : probe.hs.max_slots;

		rc = mon_open(&m[*ndesc], want, 1);
		if (rc) {
			if (m[*ndesc].fd >= 0)
				close(m[*ndesc].fd);
			break;
		}
		(*ndesc)++;
		do {
			struct mrmon_batch b = { .entries = (uintptr_t)r };

			b.count = CAP - total < batch ? CAP - total : batch;
			for (uint32_t i = 0; i < b.count; i++)
				r[i] = (struct mrmon_range){ .start = (uintptr_t)p, .len = RANGE,
							     .cookie = total + i };
			rc = mon_ioctl(m[*ndesc - 1].fd, MRMON_IOC_WATCH, &b);
			total += b.done;
		} while (!rc && total < CAP);
		if (rc && rc != -ENOSPC)
			break;
	}
	printf("%u watches of one 4 MiB range in %d descriptor(s); stopped by %s\n", total,
	       *ndesc, total == CAP ? "the cap of 2^20" : strerror(-rc));
	CHECK(rc == -ENOMEM || rc == -ENOSPC || rc == -EDQUOT || total == CAP);
	return total;
}

static void descs_close(struct mon *m, int ndesc)
{
	for (int d = 0; d < ndesc; d++)
		mon_close(&m[d]);
}

/* Runs as uid 65534 with the default limits. */
static void unprivileged(void)
{
	static struct mon m[MAX_DESCS];
	char *p = range_map();
	double t0, t_none, t_clear = 0, t_unmap;
	uint32_t n = 0;
	int ndesc = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	t0 = priv_now();
	madvise(p, RANGE, MADV_DONTNEED);
	t_none = priv_now() - t0;
	memset(p, 1, RANGE);
	printf("range: AnonHugePages %ld kB of %lu\n", huge_kb(p), RANGE >> 10);

	/* A time over the bound but near it is taken again, with new
	 * watches, up to twice: the host can preempt the emulator. */
	for (int try = 0; try < 3; try++) {
		uint64_t invalid = 0;

		descs_close(m, ndesc);
		memset(p, 1, RANGE);
		n = watches_make(m, &ndesc, p);
		t0 = priv_now();
		madvise(p, RANGE, MADV_DONTNEED);
		t_clear = priv_now() - t0;
		for (int d = 0; d < ndesc; d++)
			invalid += m[d].hdr->invalidations;
		printf("MADV_DONTNEED of the range: %.2f ms with %u watches (%.2f ms with none)\n",
		       t_clear * 1e3, n, t_none * 1e3);
		CHECK(n > 0);
		CHECK_EQ(invalid, n);
		if (t_clear < BOUND_S || t_clear > 10 * BOUND_S)
			break;
	}
	CHECK(t_clear < BOUND_S);
	memset(p, 1, RANGE);
	t0 = priv_now();
	munmap(p + 7 * PAGE, PAGE);
	t_unmap = priv_now() - t0;
	printf("munmap of one page after: %.2f ms\n", t_unmap * 1e3);
	descs_close(m, ndesc);
}

int main(void)
{
	int kmsg = priv_kmsg_mark(), status;
	pid_t pid;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing: load kmod/mrmon.ko");
	if (geteuid() != 0)
		SKIP("needs root to become uid %d with chosen limits", PRIV_NOBODY);
	CHECK(kmsg >= 0);
	for (int unlimited = 0; unlimited < 2; unlimited++) {
		printf("== RLIMIT_MEMLOCK %s\n", unlimited ? "unlimited" : "8 MiB");
		pid = fork();
		if (pid == 0) {
			if (priv_rlimit(RLIMIT_MEMLOCK, unlimited ? RLIM_INFINITY : 8ul << 20) ||
			    priv_rlimit(RLIMIT_NOFILE, 1024) || priv_become(PRIV_NOBODY))
				_exit(2);
			unprivileged();
			_exit(test_result());
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	CHECK_EQ(priv_kmsg_grep(kmsg, stall_words), 0);

	/* Control: the scan finds such words when they are logged. */
	CHECK_EQ(priv_write("/dev/kmsg", "test-mrmon-overlap: control record, "
			    "not a real report: soft lockup\n"), 0);
	CHECK_EQ(priv_kmsg_grep(kmsg, stall_words), 1);
	close(kmsg);
	return test_result();
}
