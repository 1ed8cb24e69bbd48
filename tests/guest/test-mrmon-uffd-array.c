/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-uffd-array: finding 4 of issue 24 (user arrays copied under
 * the descriptor's mutex) stays fixed.  Thread A issues a WATCH whose
 * entry array lies on userfaultfd-registered memory that nobody resolves:
 * A sleeps in the copy.  Thread B, on the same descriptor, then WATCHes
 * and UNWATCHes a range of its own: it must return within a second.  On
 * 1dca6a6 A held ctx->mutex across the copy and B waited until the fault
 * was resolved (here: never, until the test gives up after 2 s and
 * resolves it).  Control: A's WATCH completes, with its entry, once the
 * fault is resolved.  Root: the copy is a kernel-mode fault, which
 * userfaultfd serves only to privileged users by default.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include "mrmon_priv.h"
#include "mrmon_test.h"

struct arg {
	struct mon *m;
	struct mrmon_batch b;
	int rc, done;
};

static void *thread_a(void *p)
{
	struct arg *a = p;

	a->rc = mon_ioctl(a->m->fd, MRMON_IOC_WATCH, &a->b);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *thread_b(void *p)
{
	struct arg *a = p;
	struct mrmon_range *r = (void *)(uintptr_t)a->b.entries;

	a->rc = mon_ioctl(a->m->fd, MRMON_IOC_WATCH, &a->b);
	if (!a->rc)
		a->rc = mon_unwatch(a->m, r->slot, r->expected);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int wait_done(struct arg *a, double seconds)
{
	double t0 = priv_now();

	while (!__atomic_load_n(&a->done, __ATOMIC_ACQUIRE) && priv_now() - t0 < seconds)
		usleep(1000);
	return __atomic_load_n(&a->done, __ATOMIC_ACQUIRE);
}

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	char *mem = mon_map_anon(PAGE), *trap;
	struct mrmon_range rb = { .start = (uintptr_t)mem, .len = PAGE };
	struct arg a = { 0 }, b = { 0 };
	struct uffdio_register reg;
	struct uffdio_copy copy;
	struct mrmon_range *src;
	pthread_t ta, tb;
	struct mon m;
	double t0, tb_s;
	int uffd, b_done;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		SKIP("userfaultfd unavailable (%s)", strerror(errno));
	CHECK_EQ(mon_open(&m, 16, 16), 0);
	trap = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(trap != MAP_FAILED);
	reg = (struct uffdio_register){ .range = { (uintptr_t)trap, PAGE },
					.mode = UFFDIO_REGISTER_MODE_MISSING };
	CHECK_EQ(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);

	a.m = &m;
	a.b = (struct mrmon_batch){ .entries = (uintptr_t)trap, .count = 1 };
	CHECK_EQ(pthread_create(&ta, NULL, thread_a, &a), 0);
	usleep(200000);		/* A is in the kernel, asleep in the fault */
	CHECK(!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE));

	b.m = &m;
	b.b = (struct mrmon_batch){ .entries = (uintptr_t)&rb, .count = 1 };
	t0 = priv_now();
	CHECK_EQ(pthread_create(&tb, NULL, thread_b, &b), 0);
	b_done = wait_done(&b, 2.0);
	tb_s = priv_now() - t0;
	printf("B's WATCH + UNWATCH while A waits on a userfaultfd page: %s after %.3f s\n",
	       b_done ? "returned" : "still blocked", tb_s);
	CHECK(b_done);
	CHECK(tb_s < 1.0);

	/* Resolve A's fault: its entry, a watch of `mem`. */
	src = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(src != MAP_FAILED);
	src[0] = (struct mrmon_range){ .start = (uintptr_t)mem, .len = PAGE, .cookie = 7 };
	copy = (struct uffdio_copy){ .dst = (uintptr_t)trap, .src = (uintptr_t)src, .len = PAGE };
	CHECK_EQ(ioctl(uffd, UFFDIO_COPY, &copy), 0);
	CHECK(wait_done(&a, 10.0));
	CHECK(wait_done(&b, 10.0));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ(a.rc, 0);					/* control */
	CHECK_EQ(b.rc, 0);
	CHECK(((struct mrmon_range *)trap)->expected & MRMON_WORD_VALID);
	mon_close(&m);
	return test_result();
}
