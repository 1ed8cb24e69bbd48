/* SPDX-License-Identifier: MIT */
/*
 * audit-verbs - an ordinary verbs program that reuses a registration after
 * its memory changed, for mrc-audit's guest suite
 * (tests/guest/suites/45-audit.sh runs it under mrc-audit and compares
 * the report's stale uses with what this program saw happen to its data).
 *
 *   audit-verbs SCENARIO
 *
 * The application buffer (64 KiB, its own VMA between PROT_NONE guards so
 * that nothing below splits a VMA) is registered, its memory changed, and
 * then the old registration is used: an RDMA READ from a peer buffer into
 * it (ibv_post_send), and for `remap` also a RECV into it (ibv_post_recv)
 * of a SEND from the peer buffer.  The data oracle: the application's
 * mapping must, or must not, hold the peer's pattern afterwards.
 *
 * | scenario          | change                         | then            | data        | stale uses |
 * | remap             | munmap + mmap at the address   | old key         | misdirected | 2          |
 * | remap-control     | the same                       | re-registered   | lands       | 0          |
 * | remap-raw         | the same, munmap as syscall()  | old key         | misdirected | 2          |
 * | mprotect          | mprotect RW -> R -> RW         | old key         | lands       | 0          |
 * | mprotect-control  | mprotect round trip, then remap| old key         | misdirected | 1          |
 * | dontneed          | MADV_DONTNEED                  | old key         | misdirected | 1          |
 * | dontneed-control  | MADV_DONTNEED                  | re-registered   | lands       | 0          |
 * | remap-wr          | munmap + mmap at the address   | old key         | misdirected | 1          |
 * | remap-wr-control  | the same                       | re-registered   | lands       | 0          |
 * | split             | huge-page split in its window  | old key         | lands       | 0 (1 with MRC_AUDIT_VERIFY=0) |
 * | split-dontneed    | the split, then MADV_DONTNEED  | old key         | misdirected | 1          |
 *
 * The split scenarios put the buffer at the start of a 2 MiB window
 * backed by a transparent huge page (MADV_HUGEPAGE; exit 77 when the
 * kernel gives none) and mprotect one page in the middle of the window:
 * the kernel splits the huge page's mapping, and mrmon reports a CLEAR
 * over the whole window, the buffer included, while its pages stay
 * mapped where they were.  That is the false alarm mrc-audit's re-check
 * against the pinned pages removes (docs/audit.md, "Harmless CLEARs").
 *
 * The -wr scenarios post the READ through the extended QP API
 * (ibv_wr_start, ibv_wr_rdma_read, ibv_wr_set_sge, ibv_wr_complete) on a
 * second pair of QPs made by ibv_create_qp_ex.
 *
 * Exit 0 when the data did what the scenario says, 1 when not, 77 without
 * an RDMA device.  The program knows nothing of the audit.
 *
 *   audit-verbs bench N
 *
 * prints the median cost of ibv_reg_mr + ibv_dereg_mr (4 KiB and 64 KiB),
 * of an RDMA READ of 64 bytes (post and completion) and of a munmap of
 * 64 KiB, N of each: run
 * with and without mrc-audit in the same guest, the difference is the
 * audit's overhead (docs/audit.md, "Overhead").
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "loop.h"

#define LEN	(64 * 1024)
#define PAGE	4096
#define PATTERN	0xa5

enum change { REMAP, REMAP_RAW, MPROTECT, DONTNEED, SPLIT, SPLIT_DONTNEED };

struct scenario {
	const char *name;
	enum change change;
	bool reregister;	/* register again after the change */
	bool remap_after;	/* then munmap + mmap (mprotect's control) */
	bool recv;		/* also a RECV into the buffer */
	bool lands;		/* the oracle: the data reaches the mapping */
	bool wr;		/* the READ through ibv_wr_* */
};

static const struct scenario scenarios[] = {
	{ "remap", REMAP, false, false, true, false, false },
	{ "remap-control", REMAP, true, false, true, true, false },
	{ "remap-raw", REMAP_RAW, false, false, true, false, false },
	{ "mprotect", MPROTECT, false, false, false, true, false },
	{ "mprotect-control", MPROTECT, false, true, false, false, false },
	{ "dontneed", DONTNEED, false, false, false, false, false },
	{ "dontneed-control", DONTNEED, true, false, false, true, false },
	{ "remap-wr", REMAP, false, false, false, false, true },
	{ "remap-wr-control", REMAP, true, false, false, true, true },
	{ "split", SPLIT, false, false, false, true, false },
	{ "split-dontneed", SPLIT_DONTNEED, false, false, false, false, false },
};

#define HUGE	(2ul << 20)

static const int app_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

static int remap(char *buf, bool raw)
{
	if (raw ? syscall(SYS_munmap, buf, LEN) : munmap(buf, LEN))
		return -1;
	if (mmap(buf, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0) != buf)
		return -1;
	memset(buf, 0, LEN);
	return 0;
}

static int change(const struct scenario *s, char *buf)
{
	switch (s->change) {
	case REMAP:
	case REMAP_RAW:
		return remap(buf, s->change == REMAP_RAW);
	case MPROTECT:
		return mprotect(buf, LEN, PROT_READ) || mprotect(buf, LEN, PROT_READ | PROT_WRITE);
	case DONTNEED:
		return madvise(buf, LEN, MADV_DONTNEED);
	case SPLIT:
	case SPLIT_DONTNEED:
		/* a page in the middle of the window, not the buffer's */
		if (mprotect(buf + HUGE / 2, PAGE, PROT_READ))
			return -1;
		return s->change == SPLIT_DONTNEED ? madvise(buf, LEN, MADV_DONTNEED) : 0;
	}
	return -1;
}

/* Up to `want` completions, each successful, within 30 s. */
static int wait_cq(struct rdma_loop *l, int want)
{
	struct timespec tick = { 0, 1000000 };
	struct ibv_wc wc;
	int done = 0, n;

	for (int i = 0; done < want && i < 30000; i++) {
		n = ibv_poll_cq(l->cq, 1, &wc);
		if (n < 0)
			return -1;
		if (!n) {
			nanosleep(&tick, NULL);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			fprintf(stderr, "audit-verbs: completion %lu: %s\n", (unsigned long)wc.wr_id,
				ibv_wc_status_str(wc.status));
			return -1;
		}
		done++;
	}
	return done == want ? 0 : -1;
}

/* A SEND of src from qp[0] into a RECV posted on qp[1] over buf. */
static int send_recv(struct rdma_loop *l, char *buf, uint32_t lkey, char *src, uint32_t src_lkey)
{
	struct ibv_sge rs = { (uintptr_t)buf, LEN, lkey }, ss = { (uintptr_t)src, LEN, src_lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = { .wr_id = 2, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *sbad;

	if (ibv_post_recv(l->qp[1], &rwr, &rbad) || ibv_post_send(l->qp[0], &swr, &sbad))
		return -1;
	return wait_cq(l, 2);
}

static int modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		fprintf(stderr, "audit-verbs: ibv_modify_qp to state %d: %s\n", a->qp_state, strerror(ret));
	return ret;
}

/* INIT, RTR, RTS towards `peer` through the loop's GID (as loop.c does). */
static int connect_qp(const struct rdma_loop *l, struct ibv_qp *qp, uint32_t peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = l->port,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_WRITE };

	if (modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR, .path_mtu = l->mtu, .dest_qp_num = peer,
				  .rq_psn = 0x1234, .max_dest_rd_atomic = 1, .min_rnr_timer = 12,
				  .ah_attr = { .is_global = 1, .port_num = l->port,
					       .grh = { .dgid = l->gid, .hop_limit = 1,
							.sgid_index = (uint8_t)l->gid_index } } };
	if (modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				  .rnr_retry = 7, .sq_psn = 0x1234, .max_rd_atomic = 1 };
	return modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* An RDMA READ of src into buf posted through ibv_wr_* on a pair of QPs
 * made by ibv_create_qp_ex.  77: the provider has no extended QPs. */
static int wr_read(struct rdma_loop *l, char *buf, uint32_t lkey, char *src, uint32_t rkey)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = l->cq, .recv_cq = l->cq, .qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = l->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ,
	};
	struct ibv_qp *qp[2] = { ibv_create_qp_ex(l->ctx, &a), ibv_create_qp_ex(l->ctx, &a) };
	struct ibv_qp_ex *x;
	int rc = -1;

	if (!qp[0] || !qp[1]) {
		fprintf(stderr, "audit-verbs: ibv_create_qp_ex: %s\n", strerror(errno));
		rc = 77;
		goto out;
	}
	if (connect_qp(l, qp[0], qp[1]->qp_num) || connect_qp(l, qp[1], qp[0]->qp_num))
		goto out;
	x = ibv_qp_to_qp_ex(qp[0]);
	ibv_wr_start(x);
	x->wr_id = 7;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(x, rkey, (uintptr_t)src);
	ibv_wr_set_sge(x, lkey, (uintptr_t)buf, LEN);
	if (ibv_wr_complete(x)) {
		fprintf(stderr, "audit-verbs: ibv_wr_complete failed\n");
		goto out;
	}
	rc = wait_cq(l, 1);
out:
	for (int i = 0; i < 2; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	return rc;
}

static bool holds(const char *buf)
{
	for (size_t i = 0; i < LEN; i += PAGE / 2)
		if ((unsigned char)buf[i] != PATTERN)
			return false;
	return true;
}

static int run(const struct scenario *s, struct rdma_loop *l, char *buf, char *src)
{
	struct ibv_mr *mr, *src_mr;
	bool ok = true;

	memset(src, PATTERN, LEN);
	memset(buf, 0, LEN);
	src_mr = ibv_reg_mr(l->pd, src, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	mr = ibv_reg_mr(l->pd, buf, LEN, app_access);
	if (!src_mr || !mr) {
		fprintf(stderr, "audit-verbs: ibv_reg_mr: %s\n", strerror(errno));
		return 1;
	}
	if (change(s, buf) || (s->remap_after && remap(buf, false))) {
		fprintf(stderr, "audit-verbs: %s: %s\n", s->name, strerror(errno));
		return 1;
	}
	if (s->reregister) {
		ibv_dereg_mr(mr);
		mr = ibv_reg_mr(l->pd, buf, LEN, app_access);
		if (!mr) {
			fprintf(stderr, "audit-verbs: ibv_reg_mr again: %s\n", strerror(errno));
			return 1;
		}
	}
	if (s->wr) {
		int rc = wr_read(l, buf, mr->lkey, src, src_mr->rkey);

		if (rc)
			return rc == 77 ? 77 : 1;
	} else if (rdma_loop_xfer(l, IBV_WR_RDMA_READ, buf, mr->lkey, (uintptr_t)src, src_mr->rkey, LEN)) {
		return 1;
	}
	printf("%s: RDMA READ%s into the buffer: data %s\n", s->name, s->wr ? " (ibv_wr_*)" : "",
	       holds(buf) ? "landed" : "misdirected");
	ok = holds(buf) == s->lands;
	if (s->recv) {
		memset(buf, 0, LEN);
		if (send_recv(l, buf, mr->lkey, src, src_mr->lkey))
			return 1;
		printf("%s: RECV into the buffer: data %s\n", s->name, holds(buf) ? "landed" : "misdirected");
		ok = ok && holds(buf) == s->lands;
	}
	ibv_dereg_mr(mr);
	ibv_dereg_mr(src_mr);
	return ok ? 0 : 1;
}

/* The AnonHugePages of the mapping holding addr, in KiB (/proc/self/smaps). */
static long anon_huge_kib(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	unsigned long lo, hi;
	char line[256];
	bool in = false;
	long kib = -1;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kib;
}

/* The first 2 MiB window of a fresh mapping, backed by a huge page; NULL
 * when the kernel gives none (THP off). */
static char *huge_window(void)
{
	char *m = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *w;

	if (m == MAP_FAILED)
		return NULL;
	w = (char *)(((uintptr_t)m + HUGE - 1) & ~(HUGE - 1));
	if (madvise(w, HUGE, MADV_HUGEPAGE))
		return NULL;
	memset(w, 0, HUGE);
	if (anon_huge_kib(w) < (long)(HUGE / 1024)) {
		fprintf(stderr, "audit-verbs: no transparent huge page at %p (AnonHugePages %ld kB)\n",
			(void *)w, anon_huge_kib(w));
		return NULL;
	}
	return w;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static int bench(struct rdma_loop *l, char *buf, char *src, int n)
{
	static const size_t sizes[] = { 4096, LEN };
	uint64_t *reg = calloc((size_t)n, sizeof(*reg)), *dereg = calloc((size_t)n, sizeof(*dereg));
	struct ibv_mr *mr, *src_mr;
	uint64_t t0, t1;

	if (!reg || !dereg)
		return 1;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int i = 0; i < n; i++) {
			t0 = now_ns();
			mr = ibv_reg_mr(l->pd, buf, sizes[s], app_access);
			t1 = now_ns();
			if (!mr || ibv_dereg_mr(mr))
				return 1;
			reg[i] = t1 - t0;
			dereg[i] = now_ns() - t1;
		}
		printf("bench: %zu KiB: ibv_reg_mr %lu ns, ibv_dereg_mr %lu ns (medians of %d)\n",
		       sizes[s] / 1024, (unsigned long)median(reg, n), (unsigned long)median(dereg, n), n);
	}
	mr = ibv_reg_mr(l->pd, buf, LEN, app_access);
	src_mr = ibv_reg_mr(l->pd, src, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr || !src_mr)
		return 1;
	for (int i = 0; i < n; i++) {
		t0 = now_ns();
		if (rdma_loop_xfer(l, IBV_WR_RDMA_READ, buf, mr->lkey, (uintptr_t)src, src_mr->rkey, 64))
			return 1;
		reg[i] = now_ns() - t0;
	}
	printf("bench: RDMA READ of 64 B, post to completion: %lu ns (median of %d)\n",
	       (unsigned long)median(reg, n), n);
	/* what the audit adds to an unmapping call (vmcalls.c): its record */
	for (int i = 0; i < n; i++) {
		char *m = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return 1;
		t0 = now_ns();
		munmap(m, LEN);
		reg[i] = now_ns() - t0;
	}
	printf("bench: munmap of 64 KiB (never touched): %lu ns (median of %d)\n",
	       (unsigned long)median(reg, n), n);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(src_mr);
	free(reg);
	free(dereg);
	return 0;
}

int main(int argc, char **argv)
{
	const struct scenario *s = NULL;
	int bench_n = 0;
	struct rdma_loop l;
	char *area, *src, *buf;
	int rc;

	for (size_t i = 0; argc == 2 && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(argv[1], scenarios[i].name))
			s = &scenarios[i];
	if (argc == 3 && !strcmp(argv[1], "bench"))
		bench_n = atoi(argv[2]);
	if (!s && bench_n <= 0) {
		fprintf(stderr, "usage: audit-verbs remap|remap-control|remap-raw|mprotect|mprotect-control|dontneed|dontneed-control|remap-wr|remap-wr-control|split|split-dontneed\n"
				"       audit-verbs bench N\n");
		return 2;
	}
	if (rdma_loop_open(&l, NULL, -1))
		return 77;
	/* guard page, buffer, guard page: the buffer is a VMA of its own */
	area = mmap(NULL, LEN + 2 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	src = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || src == MAP_FAILED ||
	    mprotect(area + PAGE, LEN, PROT_READ | PROT_WRITE)) {
		perror("audit-verbs: mmap");
		return 1;
	}
	if (bench_n) {
		rc = bench(&l, area + PAGE, src, bench_n);
		rdma_loop_close(&l);
		return rc;
	}
	buf = area + PAGE;
	if ((s->change == SPLIT || s->change == SPLIT_DONTNEED) && !(buf = huge_window())) {
		rdma_loop_close(&l);
		return 77;
	}
	rc = run(s, &l, buf, src);
	rdma_loop_close(&l);
	printf("%s: %s\n", s->name, rc ? "FAIL" : "PASS");
	return rc;
}
