/* SPDX-License-Identifier: MIT */
/*
 * Memory just mapped is never served from an older registration, even when
 * the unmapping of the older memory has not been decoded yet (issue 25 item
 * 2 under bpf).  The syscall variant decodes an munmap at its sys_exit,
 * after mmap_lock was released: another thread can map the freed address
 * in between, return and get it.  That window is made deterministic here by
 * an munmap the decoder never sees, a 32-bit system call (int $0x80, an
 * address below 4 GiB): then the range is mapped again by mmap, by shmat,
 * and by growing the mapping below it in place with mremap.  Each of those
 * calls must clear the watches of the range it maps before it returns.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"

#define LEN (64 * 1024)
#define NR_IA32_MUNMAP 91

/* Below 4 GiB, with the mapping [addr - LEN, addr) right under it. */
static int prepare(struct guarantee_ctx *c)
{
	char *p = mmap(NULL, 2 * LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	c->addr = p + LEN;
	c->len = LEN;
	c->aux = p;
	return 0;
}

static sigjmp_buf no_int80;

static void on_segv(int sig)
{
	siglongjmp(no_int80, 1);
}

/* munmap as a 32-bit process makes it: the syscall variant's decoder
 * reads x86-64 numbers (91 is fchmod there) and lets it pass.  Where
 * int $0x80 is not served (this 6.18 host: SIGSEGV, though its config has
 * IA32_EMULATION) the case skips. */
static int munmap_unseen(struct guarantee_ctx *c)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	volatile long ret = -ENOSYS;

	sigaction(SIGSEGV, &sa, &old);
	if (!sigsetjmp(no_int80, 1)) {
		long r;

		__asm__ volatile("int $0x80"
				 : "=a"(r)
				 : "a"(NR_IA32_MUNMAP), "b"((uint32_t)(uintptr_t)c->addr),
				   "c"((uint32_t)c->len)
				 : "memory", "cc", "r8", "r9", "r10", "r11");
		ret = r;
	}
	sigaction(SIGSEGV, &old, NULL);
	if (ret == -ENOSYS) {
		snprintf(c->why, sizeof(c->why), "no 32-bit system calls (int $0x80) here");
		return GUARANTEE_SKIP;
	}
	return (int)ret;
}

static int apply_mmap(struct guarantee_ctx *c)
{
	int ret = munmap_unseen(c);

	if (ret)
		return ret;
	return guarantee_map(c->addr, c->len, 0) ? 0 : -EADDRINUSE;
}

static int apply_shmat(struct guarantee_ctx *c)
{
	int id, ret = munmap_unseen(c);
	void *p;

	if (ret)
		return ret;
	id = shmget(IPC_PRIVATE, c->len, IPC_CREAT | 0600);
	if (id < 0)
		return -errno;
	p = shmat(id, c->addr, 0);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1)
		return -errno;
	return p == c->addr ? 0 : -EADDRINUSE;
}

static int apply_mremap_grow(struct guarantee_ctx *c)
{
	int ret = munmap_unseen(c);

	if (ret)
		return ret;
	/* The mapping below grows in place over the freed range. */
	return mremap(c->aux, LEN, 2 * LEN, 0) == c->aux ? 0 : -errno;
}

/* Whatever is at [aux, addr + LEN) now: mappings, an shm attach. */
static void release(struct guarantee_ctx *c)
{
	munmap(c->aux, 2 * LEN);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "mmap-over-unseen", prepare, apply_mmap, release, NULL },
		{ "shmat-over-unseen", prepare, apply_shmat, release, NULL },
		{ "mremap-grow-unseen", prepare, apply_mremap_grow, release, NULL },
	};

	bpf_test_pick_monitor();
	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
