/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-map: the word map is VM_IO | VM_PFNMAP (special PTEs),
 * read-only, never inherited, and filled by a fault handler.
 *   MADV_DONTNEED of the map     EINVAL (a PFN mapping); the loads see the
 *                                live words, an invalidation shows
 *   MADV_DOFORK of the map       EINVAL; a forked child has no map (not in
 *                                its /proc/self/maps, a load is SIGSEGV)
 *   the map as an io_uring fixed buffer, or read by process_vm_readv
 *                                EFAULT (no GUP of the words)
 * io_uring pins for writing, which the read-only map refuses with or
 * without VM_IO; process_vm_readv pins for reading only, so it is the
 * check that needs VM_IO (seen succeed on a module built without it).
 * (test-mrmon-vmsplice: vmsplice(), GUP-fast, fails too.)  Controls: an
 * ordinary mapping takes MADV_NOHUGEPAGE and MADV_DOFORK, is in the
 * child and readable there; an ordinary page registers as a fixed buffer
 * and reads through process_vm_readv.
 */
#include <liburing.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "mrmon_test.h"

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

/* Loads the word, or returns -signal if the load faulted. */
static int load_word(const struct mon *m, uint32_t slot, uint64_t *out)
{
	fault_sig = 0;
	signal(SIGBUS, on_fault);
	signal(SIGSEGV, on_fault);
	if (sigsetjmp(fault_jmp, 1) == 0)
		*out = __atomic_load_n(&m->words[slot], __ATOMIC_ACQUIRE);
	signal(SIGBUS, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
	return fault_sig ? -fault_sig : 0;
}

static void check_dontneed(struct mon *m)
{
	char *p = mon_map_anon(2 * PAGE);
	uint32_t slot = 0, s2 = 0;
	uint64_t e = 0, e2 = 0, v = 0;

	CHECK_EQ(mon_watch(m, p, PAGE, 1, &slot, &e), 0);
	CHECK_EQ(mon_watch(m, p + PAGE, PAGE, 2, &s2, &e2), 0);
	CHECK_EQ(load_word(m, slot, &v), 0);
	CHECK_EQ(v, e);
	CHECK_EQ(m->hdr->nslots, 16);
	CHECK_EQ(m->hdr->invalidations, 0);
	/* Special PTEs: madvise cannot zap a VM_PFNMAP mapping. */
	CHECK(madvise(m->map, m->map_size, MADV_DONTNEED) < 0 && errno == EINVAL);
	CHECK_EQ(madvise(p + PAGE, PAGE, MADV_NORMAL), 0);		/* control */
	/* An invalidation lands in the page the loads see. */
	CHECK_EQ(munmap(p, PAGE), 0);
	CHECK_EQ(load_word(m, slot, &v), 0);
	CHECK_EQ(v, e & ~MRMON_WORD_VALID);
	CHECK_EQ(m->hdr->invalidations, 1);
	CHECK(mon_valid(m, s2, e2));
	printf("MADV_DONTNEED of the map: EINVAL (special PTEs); the loads see the live "
	       "words (valid, then invalidated)\n");
	CHECK_EQ(mon_unwatch(m, slot, e), -ESTALE);	/* gone with its range */
	CHECK_EQ(mon_unwatch(m, s2, e2), 0);
	munmap(p + PAGE, PAGE);
}

/* Is [p, p + 1) in this process's /proc/self/maps? */
static int in_maps(const void *p)
{
	char line[512];
	unsigned long lo, hi;
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= (uintptr_t)p && (uintptr_t)p < hi)
			found = 1;
	if (f)
		fclose(f);
	return found;
}

static int fork_child(const struct mon *m, const char *plain)
{
	uint64_t v;

	CHECK(!in_maps(m->map));
	CHECK(!in_maps(m->words));
	CHECK_EQ(load_word(m, 0, &v), -SIGSEGV);
	/* Controls: an ordinary mapping came along and reads. */
	CHECK(in_maps(plain));
	CHECK_EQ(plain[0], 42);
	return test_result();
}

static void check_fork(struct mon *m)
{
	char *plain = mon_map_anon(PAGE);
	pid_t pid;

	plain[0] = 42;
	CHECK(madvise(m->map, m->map_size, MADV_DOFORK) < 0 && errno == EINVAL);
	CHECK(madvise((void *)m->words, PAGE, MADV_DOFORK) < 0 && errno == EINVAL);
	CHECK_EQ(madvise(plain, PAGE, MADV_DONTFORK), 0);		/* control */
	CHECK_EQ(madvise(plain, PAGE, MADV_DOFORK), 0);
	CHECK(in_maps(m->map) && in_maps(m->words));			/* control */
	pid = fork();
	if (pid == 0)
		_exit(fork_child(m, plain));
	CHECK(pid > 0);
	CHECK_EQ(mon_child_status(pid), 0);
	printf("MADV_DOFORK of the map: EINVAL; a child has no map (a load is SIGSEGV)\n");
	munmap(plain, PAGE);
}

static int read_remote(const void *p, size_t len)
{
	char buf[PAGE];
	struct iovec local = { buf, len }, remote = { (void *)p, len };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) < 0 ? -errno : 0;
}

static void check_gup(struct mon *m)
{
	char *plain = mon_map_anon(PAGE);
	struct iovec words = { (void *)m->words, PAGE }, whole = { m->map, m->map_size };
	struct iovec ok = { plain, PAGE };
	struct io_uring ring;

	if (io_uring_queue_init(4, &ring, 0))
		SKIP("io_uring unavailable");
	CHECK_EQ(io_uring_register_buffers(&ring, &words, 1), -EFAULT);
	CHECK_EQ(io_uring_register_buffers(&ring, &whole, 1), -EFAULT);
	CHECK_EQ(io_uring_register_buffers(&ring, &ok, 1), 0);		/* control */
	CHECK_EQ(io_uring_unregister_buffers(&ring), 0);
	CHECK_EQ(read_remote(m->words, PAGE), -EFAULT);
	CHECK_EQ(read_remote(plain, PAGE), 0);				/* control */
	io_uring_queue_exit(&ring);
	printf("GUP of the map: io_uring fixed buffer EFAULT, process_vm_readv EFAULT; "
	       "an ordinary page works for both\n");
	munmap(plain, PAGE);
}

int main(void)
{
	struct mon m;

	setvbuf(stdout, NULL, _IONBF, 0);
	CHECK_EQ(mon_open(&m, 16, 16), 0);
	CHECK_EQ(m.map_size, 2 * PAGE);
	check_gup(&m);
	check_fork(&m);
	check_dontneed(&m);
	mon_close(&m);
	return test_result();
}
