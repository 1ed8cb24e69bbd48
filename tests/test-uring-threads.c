/* SPDX-License-Identifier: MIT */
/*
 * The io_uring backend from several threads at once: every registration
 * gets a slot no other live registration holds, and every slot comes back.
 * Control: the checker does catch an index handed out twice (it is run on
 * a duplicated key first).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include "backend/backend.h"
#include "oracle.h"
#include "testutil.h"

#define THREADS 4
#define SLOTS 8
#define ROUNDS 2000
#define LEN 4096

static struct mrc_backend *be;
static unsigned char held[SLOTS];	/* atomic: 1 while a thread owns it */
static char *bufs;

/* Claim a slot for this thread; 0 if some other registration has it. */
static int claim(uint64_t key)
{
	return key < SLOTS && !__atomic_exchange_n(&held[key], 1, __ATOMIC_ACQ_REL);
}

static void release(uint64_t key)
{
	__atomic_store_n(&held[key], 0, __ATOMIC_RELEASE);
}

static void *worker(void *arg)
{
	char *buf = bufs + (size_t)(uintptr_t)arg * LEN;
	struct mrc_reg r;

	for (int i = 0; i < ROUNDS; i++) {
		int ret = be->ops->reg(be, buf, LEN, 0, 0, &r, NULL);

		if (ret == -ENOSPC)
			continue;	/* more threads than free slots: fine */
		CHECK_EQ(ret, 0);
		if (ret)
			break;
		CHECK(claim(r.key));
		release(r.key);
		CHECK_EQ(be->ops->dereg(be, &r), 0);
	}
	return NULL;
}

int main(void)
{
	struct mrcache_config cfg;
	struct mrc_reg regs[SLOTS];
	pthread_t t[THREADS];
	struct oracle o;
	int ret;

	ret = oracle_init(&o, 1, LEN);
	if (ret)
		SKIP("io_uring unusable here: %s", strerror(-ret));
	memset(&cfg, 0, sizeof(cfg));
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &o.ring;
	cfg.uring_slots = SLOTS;
	CHECK_EQ(mrc_backend_open(&cfg, &be), 0);
	bufs = mmap(NULL, THREADS * LEN, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(bufs != MAP_FAILED);

	/* Control: the same key twice is caught. */
	CHECK(claim(3));
	CHECK(!claim(3));
	release(3);

	for (uintptr_t i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&t[i], NULL, worker, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);

	/* Every slot came back: the table fills exactly once more. */
	for (int i = 0; i < SLOTS; i++)
		CHECK_EQ(be->ops->reg(be, bufs, LEN, 0, 0, &regs[i], NULL), 0);
	CHECK_EQ(be->ops->reg(be, bufs, LEN, 0, 0, &regs[0], NULL), -ENOSPC);
	for (int i = 0; i < SLOTS; i++)
		CHECK_EQ(be->ops->dereg(be, &regs[i]), 0);
	be->ops->close(be);
	munmap(bufs, THREADS * LEN);
	oracle_fini(&o);
	return test_result();
}
