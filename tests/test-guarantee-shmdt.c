/* SPDX-License-Identifier: MIT */
/* Monitor guarantee: shmdt of a cached System V segment, then a new
 * segment attached at the same address; and shmat(SHM_REMAP) of a new
 * segment over a cached private range.  A later get misses. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/shm.h>
#include "guarantee.h"

#define LEN (64 * 1024)

/* Attach a new private segment (at `at` if not NULL), removed at detach. */
static void *attach(void *at, int flags, char *why, size_t whylen)
{
	int id = shmget(IPC_PRIVATE, LEN, IPC_CREAT | 0600);
	void *p;

	if (id < 0) {
		snprintf(why, whylen, "shmget: %s", strerror(errno));
		return NULL;
	}
	p = shmat(id, at, flags);
	shmctl(id, IPC_RMID, NULL);
	if (p == (void *)-1) {
		snprintf(why, whylen, "shmat: %s", strerror(errno));
		return NULL;
	}
	return p;
}

static int prepare(struct guarantee_ctx *c)
{
	c->len = LEN;
	c->addr = attach(NULL, 0, c->why, sizeof(c->why));
	return c->addr ? 0 : GUARANTEE_SKIP;
}

static int apply(struct guarantee_ctx *c)
{
	if (shmdt(c->addr))
		return -errno;
	return attach(c->addr, 0, c->why, sizeof(c->why)) == c->addr ? 0 : -EADDRINUSE;
}

static int apply_remap(struct guarantee_ctx *c)
{
	void *p = attach(c->addr, SHM_REMAP, c->why, sizeof(c->why));

	if (!p)
		return GUARANTEE_SKIP;
	return p == c->addr ? 0 : -EADDRINUSE;
}

static void release(struct guarantee_ctx *c)
{
	shmdt(c->addr);
}

int main(void)
{
	static const struct guarantee_case cases[] = {
		{ "shmdt", prepare, apply, release, NULL },
		{ "shmat-remap", guarantee_prepare_private, apply_remap,
		  guarantee_release_maps, NULL },
	};

	return guarantee_run(cases, sizeof(cases) / sizeof(cases[0]));
}
