/* SPDX-License-Identifier: MIT */
/*
 * mpi-churn: a plain MPI program (no mrcache or libfabric code in it) for
 * two ranks, whose buffers are freed and allocated again between
 * transfers.  Run it under whichever MR cache monitor is being judged
 * (docs/mpi.md); the cluster suite runs it across two nodes.
 *
 *   mpi-churn [--iters N] [--reuse] [--rma] [--raw] [--expect-stale]
 *
 * Iteration i moves one message of size 4 KiB << 2 * (i % 6) (4 KiB to
 * 4 MiB), from rank i % 2 to the other, from a send buffer that rank just
 * allocated and filled, into a receive buffer the other rank just
 * allocated and poisoned.  Buffers come from malloc/free, realloc and
 * mmap/munmap in turn (--raw: the bare munmap syscall, which no hook
 * sees); mmap asks for the same address each time, so a new mapping takes
 * the place of one that may still be registered.  Messages past ofi_rxm's
 * eager size go by rendezvous: both sides register the buffers through
 * libfabric's MR cache, and a stale cache hit makes the RDMA read use the
 * old pages.  The receiver checks every byte: a buffer that holds an
 * earlier iteration's data (or the poison) is "stale", anything else wrong
 * "corrupt".  --rma also puts the send buffer into a window over the
 * receive buffer (MPI_Put, fence) and gets it back into a third fresh
 * buffer (MPI_Get), both checked the same way.  --reuse keeps one buffer
 * per size and direction for the whole run (the reuse pattern).
 *
 * Rank 0 prints one line: "mpi-churn: pattern P iters N messages M stale
 * S corrupt C ns/msg T".  Exit 0 when S and C are 0 (with --expect-stale:
 * when S > 0, the negative control, and C is 0).
 */
#include <inttypes.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MIN_SIZE	(4u << 10)
#define NSIZES		6		/* 4 KiB, 16 KiB, ... 4 MiB */
#define MAX_SIZE	(MIN_SIZE << 2 * (NSIZES - 1))
#define POISON		0xdeadbeefdeadbeefull

enum churn_kind { KIND_MALLOC, KIND_REALLOC, KIND_MMAP, NKINDS };

struct churn_opts {
	unsigned iters;
	bool reuse, rma, raw, expect_stale;
};

/* Where a rank's buffers come from: the same slot is freed and refilled. */
struct churn_slot {
	void *buf;
	size_t size;
	enum churn_kind kind;
	void *realloc_buf;	/* carried across iterations by realloc */
	void *mmap_hint;	/* the address every mmap asks for */
};

struct churn_counts {
	unsigned long messages, stale, corrupt;
};

static void die(const char *what)
{
	fprintf(stderr, "mpi-churn: %s\n", what);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

static uint64_t pattern_word(unsigned iter, unsigned leg, size_t i)
{
	return (uint64_t)(iter + 1) << 40 | (uint64_t)leg << 32 | (uint32_t)i;
}

static void pattern_fill(uint64_t *w, size_t size, unsigned iter, unsigned leg)
{
	for (size_t i = 0; i < size / 8; i++)
		w[i] = pattern_word(iter, leg, i);
}

/*
 * Every word against what the sender wrote.  Words of an earlier iteration
 * or the poison mean the transfer used pages that were not the buffer's.
 */
static void pattern_check(const uint64_t *w, size_t size, unsigned iter, unsigned leg,
			  struct churn_counts *c, const char *what)
{
	size_t bad = 0, old = 0;

	for (size_t i = 0; i < size / 8; i++) {
		if (w[i] == pattern_word(iter, leg, i))
			continue;
		bad++;
		if (w[i] == POISON || (w[i] >> 40 && (w[i] >> 40) < iter + 1))
			old++;
	}
	if (!bad)
		return;
	if (old == bad)
		c->stale++;
	else
		c->corrupt++;
	if (c->stale + c->corrupt <= 5)
		fprintf(stderr, "mpi-churn: iteration %u %s of %zu bytes: %zu words wrong, %zu old%s\n",
			iter, what, size, bad, old, old == bad ? " (stale)" : "");
}

static void *hint_reserve(void)
{
	void *p = mmap(NULL, MAX_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap of the hint");
	munmap(p, MAX_SIZE);
	return p;
}

static void slot_alloc(struct churn_slot *s, size_t size, enum churn_kind kind)
{
	s->size = size;
	s->kind = kind;
	switch (kind) {
	case KIND_MALLOC:
		s->buf = malloc(size);
		break;
	case KIND_REALLOC:
		s->buf = s->realloc_buf = realloc(s->realloc_buf, size);
		break;
	default:
		s->buf = mmap(s->mmap_hint, size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (s->buf == MAP_FAILED)
			s->buf = NULL;
		break;
	}
	if (!s->buf)
		die("out of memory");
}

static void slot_free(struct churn_slot *s, bool raw)
{
	if (s->kind == KIND_MALLOC)
		free(s->buf);
	else if (s->kind == KIND_MMAP && raw)
		syscall(SYS_munmap, s->buf, s->size);
	else if (s->kind == KIND_MMAP)
		munmap(s->buf, s->size);
	/* realloc's buffer stays for the next realloc */
	s->buf = NULL;
}

/* The reuse pattern: one buffer per size, allocated once, never freed. */
static void *reuse_buf(void **bufs, unsigned size_index, size_t size)
{
	if (!bufs[size_index] && posix_memalign(&bufs[size_index], 4096, size))
		die("out of memory");
	return bufs[size_index];
}

struct churn_rank {
	int rank;
	struct churn_opts o;
	struct churn_slot send, recv, get;
	void *reuse[3][NSIZES];
	struct churn_counts c;
};

static void *rank_buf(struct churn_rank *r, struct churn_slot *s, unsigned which,
		      unsigned iter, size_t size)
{
	if (r->o.reuse)
		return reuse_buf(r->reuse[which], iter % NSIZES, size);
	slot_alloc(s, size, (enum churn_kind)(iter / 2 % NKINDS));
	return s->buf;
}

static void rank_release(struct churn_rank *r, struct churn_slot *s)
{
	if (!r->o.reuse)
		slot_free(s, r->o.raw);
}

/* MPI_Put of the sender's buffer into a window over the receiver's, then
 * MPI_Get of it back into a third buffer of the sender. */
static void iter_rma(struct churn_rank *r, unsigned iter, size_t size, bool sender,
		     uint64_t *sbuf, uint64_t *rbuf)
{
	int peer = 1 - r->rank;
	uint64_t *gbuf = NULL;
	MPI_Win win;

	if (!sender)
		for (size_t i = 0; i < size / 8; i++)
			rbuf[i] = POISON;
	if (MPI_Win_create(sender ? NULL : rbuf, sender ? 0 : (MPI_Aint)size, 8,
			   MPI_INFO_NULL, MPI_COMM_WORLD, &win) != MPI_SUCCESS)
		die("MPI_Win_create");
	MPI_Win_fence(0, win);
	if (sender)
		MPI_Put(sbuf, (int)size, MPI_BYTE, peer, 0, (int)size, MPI_BYTE, win);
	MPI_Win_fence(0, win);
	if (!sender)
		pattern_check(rbuf, size, iter, 2, &r->c, "put");
	if (sender) {
		gbuf = rank_buf(r, &r->get, 2, iter, size);
		for (size_t i = 0; i < size / 8; i++)
			gbuf[i] = POISON;
		MPI_Get(gbuf, (int)size, MPI_BYTE, peer, 0, (int)size, MPI_BYTE, win);
	}
	MPI_Win_fence(0, win);
	if (sender) {
		pattern_check(gbuf, size, iter, 2, &r->c, "get");
		rank_release(r, &r->get);
	}
	MPI_Win_free(&win);
	r->c.messages += 2;
}

static void iter_run(struct churn_rank *r, unsigned iter)
{
	size_t size = (size_t)MIN_SIZE << 2 * (iter % NSIZES);
	bool sender = (int)(iter % 2) == r->rank;
	int peer = 1 - r->rank;
	uint64_t *sbuf = NULL, *rbuf = NULL;

	if (sender) {
		sbuf = rank_buf(r, &r->send, 0, iter, size);
		pattern_fill(sbuf, size, iter, 1);
		MPI_Send(sbuf, (int)size, MPI_BYTE, peer, (int)iter, MPI_COMM_WORLD);
	} else {
		rbuf = rank_buf(r, &r->recv, 1, iter, size);
		for (size_t i = 0; i < size / 8; i++)
			rbuf[i] = POISON;
		MPI_Recv(rbuf, (int)size, MPI_BYTE, peer, (int)iter, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		pattern_check(rbuf, size, iter, 1, &r->c, "recv");
	}
	r->c.messages++;
	if (r->o.rma) {
		if (sender)
			pattern_fill(sbuf, size, iter, 2);
		iter_rma(r, iter, size, sender, sbuf, rbuf);
	}
	rank_release(r, sender ? &r->send : &r->recv);
}

static int opts_parse(int argc, char **argv, struct churn_opts *o)
{
	*o = (struct churn_opts){ .iters = 60 };
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			o->iters = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--reuse"))
			o->reuse = true;
		else if (!strcmp(argv[i], "--rma"))
			o->rma = true;
		else if (!strcmp(argv[i], "--raw"))
			o->raw = true;
		else if (!strcmp(argv[i], "--expect-stale"))
			o->expect_stale = true;
		else
			return -1;
	}
	return o->iters ? 0 : -1;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct churn_rank r = { 0 };
	unsigned long sum[3], mine[3];
	int size, ok = 0;
	double t0, t1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || opts_parse(argc, argv, &r.o)) {
		if (r.rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 mpi-churn [--iters N] [--reuse] "
				"[--rma] [--raw] [--expect-stale]\n");
		MPI_Finalize();
		return 2;
	}
	r.send.mmap_hint = hint_reserve();
	r.recv.mmap_hint = hint_reserve();
	r.get.mmap_hint = hint_reserve();
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now_ns();
	for (unsigned i = 0; i < r.o.iters; i++)
		iter_run(&r, i);
	MPI_Barrier(MPI_COMM_WORLD);
	t1 = now_ns();
	mine[0] = r.c.messages;
	mine[1] = r.c.stale;
	mine[2] = r.c.corrupt;
	MPI_Reduce(mine, sum, 3, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (r.rank == 0) {
		/* Each message was counted by both ranks. */
		sum[0] /= 2;
		printf("mpi-churn: pattern %s%s iters %u messages %lu stale %lu corrupt %lu ns/msg %.0f\n",
		       r.o.reuse ? "reuse" : "churn", r.o.rma ? "+rma" : "", r.o.iters, sum[0],
		       sum[1], sum[2], (t1 - t0) / (double)sum[0]);
		ok = sum[2] == 0 && (r.o.expect_stale ? sum[1] > 0 : sum[1] == 0);
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return ok ? 0 : 1;
}
