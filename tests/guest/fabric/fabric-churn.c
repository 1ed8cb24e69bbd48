/* SPDX-License-Identifier: MIT */
/*
 * fabric-churn: an ordinary libfabric program (no mrcache code in it)
 * whose source buffer is unmapped and mapped again at the same address
 * between transfers.  Run it under whichever MR cache monitor is being
 * judged: LD_PRELOAD=libmrcache-fabric-preload.so (mrmon) or
 * FI_MR_CACHE_MONITOR=userfaultfd|memhooks.
 *
 *   fabric-churn churn ITERS [--raw] [--expect-stale]
 *   fabric-churn hit ITERS
 *
 * churn, per iteration: fill the buffer with this iteration's pattern,
 * fi_mr_reg it (a miss is expected: the pages are new), fi_write it over an
 * RDM endpoint pair of one process (verbs;ofi_rxm by default) to a target
 * buffer, check the target; fi_mr_reg it again (a hit is expected: same
 * key); then munmap (libc, or with --raw the bare syscall, which no hook
 * sees) and mmap the same address again.  A cache hit on the old
 * registration writes the old pages: the target shows an earlier
 * iteration's pattern ("stale"); anything else wrong is "corrupt".  Exit 0
 * when no transfer was stale and every registration after a remap got a
 * new key (with --expect-stale: when at least one transfer was stale, the
 * negative control).
 *
 * hit: registers one buffer, then times ITERS fi_mr_reg + fi_close of it
 * (all hits); prints the median of 25 slices in ns per registration.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define LEN	(64 * 1024)
#define SLICES	25

struct fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep[2];
	struct fid_cq *cq[2];
	fi_addr_t addr[2];
};

#define TRY(call)							\
	do {								\
		int rc_ = (call);					\
		if (rc_) {						\
			fprintf(stderr, "fabric-churn: %s: %s\n", #call,	\
				fi_strerror(-rc_));			\
			exit(1);					\
		}							\
	} while (0)

/*
 * The first domain that opens: verbs lists every rxe device, but its MSG
 * endpoints (under ofi_rxm) need one with a non-loopback IP address.
 */
static void fab_pick_domain(struct fab *f, struct fi_info *list)
{
	for (struct fi_info *i = list; i; i = i->next) {
		if (fi_fabric(i->fabric_attr, &f->fabric, NULL))
			continue;
		if (!fi_domain(f->fabric, i, &f->domain, NULL)) {
			f->info = fi_dupinfo(i);
			return;
		}
		fprintf(stderr, "fabric-churn: domain %s does not open\n", i->domain_attr->name);
		fi_close(&f->fabric->fid);
	}
	fprintf(stderr, "fabric-churn: no domain opens\n");
	exit(1);
}

static void fab_open(struct fab *f)
{
	struct fi_info *hints = fi_allocinfo();
	const char *prov = getenv("FI_PROVIDER");
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	struct fi_info *list;
	int rc;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_RMA | FI_MSG;
	hints->mode = FI_CONTEXT;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov ? prov : "verbs;ofi_rxm");
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &list);
	fi_freeinfo(hints);
	if (rc) {
		printf("SKIP: fi_getinfo(%s): %s\n", prov ? prov : "verbs;ofi_rxm",
		       fi_strerror(-rc));
		exit(rc == -FI_ENODATA ? 77 : 1);
	}
	fab_pick_domain(f, list);
	fi_freeinfo(list);
	printf("provider %s, domain %s\n", f->info->fabric_attr->prov_name,
	       f->info->domain_attr->name);
	TRY(fi_av_open(f->domain, &ava, &f->av, NULL));
	for (int i = 0; i < 2; i++) {
		char name[256];
		size_t len = sizeof(name);

		TRY(fi_cq_open(f->domain, &cqa, &f->cq[i], NULL));
		TRY(fi_endpoint(f->domain, f->info, &f->ep[i], NULL));
		TRY(fi_ep_bind(f->ep[i], &f->av->fid, 0));
		TRY(fi_ep_bind(f->ep[i], &f->cq[i]->fid, FI_TRANSMIT | FI_RECV));
		TRY(fi_enable(f->ep[i]));
		TRY(fi_getname(&f->ep[i]->fid, name, &len));
		if (fi_av_insert(f->av, name, 1, &f->addr[i], 0, NULL) != 1) {
			fprintf(stderr, "fabric-churn: fi_av_insert failed\n");
			exit(1);
		}
	}
}

static void fab_close(struct fab *f)
{
	for (int i = 0; i < 2; i++) {
		fi_close(&f->ep[i]->fid);
		fi_close(&f->cq[i]->fid);
	}
	fi_close(&f->av->fid);
	fi_close(&f->domain->fid);
	fi_close(&f->fabric->fid);
	fi_freeinfo(f->info);
}

/* rxm progresses manually: the target's queue must be read too. */
static void fab_wait(struct fab *f)
{
	struct fi_cq_entry e;
	struct fi_cq_err_entry err = { 0 };

	for (;;) {
		ssize_t n = fi_cq_read(f->cq[0], &e, 1);

		(void)fi_cq_read(f->cq[1], &e, 1);
		if (n == 1)
			return;
		if (n == -FI_EAVAIL) {
			fi_cq_readerr(f->cq[0], &err, 0);
			fprintf(stderr, "fabric-churn: write failed: %s\n", fi_strerror(err.err));
			exit(1);
		}
		if (n != -FI_EAGAIN) {
			fprintf(stderr, "fabric-churn: fi_cq_read: %s\n", fi_strerror((int)-n));
			exit(1);
		}
	}
}

static void fab_poke(struct fab *f)
{
	struct fi_cq_entry e;

	(void)fi_cq_read(f->cq[1], &e, 1);
}

static void fab_write(struct fab *f, void *src, struct fid_mr *mr, void *dst, uint64_t rkey)
{
	static struct fi_context ctx;
	ssize_t rc;

	while ((rc = fi_write(f->ep[0], src, LEN, fi_mr_desc(mr), f->addr[1],
			      (uintptr_t)dst, rkey, &ctx)) == -FI_EAGAIN)
		fab_poke(f);
	if (rc) {
		fprintf(stderr, "fabric-churn: fi_write: %s\n", fi_strerror((int)-rc));
		exit(1);
	}
	fab_wait(f);
}

static struct fid_mr *reg(struct fab *f, void *buf, uint64_t access)
{
	static uint64_t next_key = 1;	/* for providers without FI_MR_PROV_KEY */
	struct fid_mr *mr;

	TRY(fi_mr_reg(f->domain, buf, LEN, access, 0, next_key++, 0, &mr, NULL));
	return mr;
}

static void fill(unsigned char *p, unsigned iter)
{
	for (size_t i = 0; i < LEN; i++)
		p[i] = (unsigned char)(iter * 31 + i * 7 + 1);
}

static bool matches(const unsigned char *p, unsigned iter)
{
	for (size_t i = 0; i < LEN; i++)
		if (p[i] != (unsigned char)(iter * 31 + i * 7 + 1))
			return false;
	return true;
}

/* A stale registration sends the pages of the iteration it was made in. */
static bool earlier(const unsigned char *p, unsigned iter)
{
	while (iter--)
		if (matches(p, iter))
			return true;
	return false;
}

static void *map_buf(void *at)
{
	void *p = mmap(at, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);

	if (p == MAP_FAILED || (at && p != at)) {
		perror("fabric-churn: mmap");
		exit(1);
	}
	return p;
}

static int churn(struct fab *f, unsigned iters, bool raw, bool expect_stale)
{
	unsigned char *src = map_buf(NULL), *dst = map_buf(NULL);
	struct fid_mr *dmr = reg(f, dst, FI_REMOTE_WRITE);
	uint64_t rkey = fi_mr_key(dmr), prev_key = 0;
	unsigned stale = 0, bad = 0, kept_key = 0, missed_hit = 0;

	for (unsigned i = 0; i < iters; i++) {
		struct fid_mr *mr;
		uint64_t key;

		fill(src, i);
		memset(dst, 0, LEN);
		mr = reg(f, src, FI_WRITE);
		key = fi_mr_key(mr);
		kept_key += i && key == prev_key;
		fab_write(f, src, mr, dst, rkey);
		if (!matches(dst, i)) {
			if (earlier(dst, i))
				stale++;
			else
				bad++;
		}
		fi_close(&mr->fid);
		mr = reg(f, src, FI_WRITE);
		missed_hit += fi_mr_key(mr) != key;
		fi_close(&mr->fid);
		prev_key = key;
		if (raw)
			syscall(SYS_munmap, src, LEN);
		else
			munmap(src, LEN);
		src = map_buf(src);
	}
	fi_close(&dmr->fid);
	munmap(src, LEN);
	munmap(dst, LEN);
	printf("churn %u iterations (%s munmap): stale %u, corrupt %u, "
	       "same key after remap %u, second registration not a hit %u\n",
	       iters, raw ? "raw syscall" : "libc", stale, bad, kept_key, missed_hit);
	if (bad)
		return 1;
	if (expect_stale)
		return stale ? 0 : 1;
	return stale || kept_key ? 1 : 0;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int hit(struct fab *f, unsigned iters)
{
	unsigned char *buf = map_buf(NULL);
	uint64_t slice[SLICES], key;
	struct fid_mr *mr;
	unsigned per = iters / SLICES ? iters / SLICES : 1, missed = 0;

	memset(buf, 1, LEN);
	mr = reg(f, buf, FI_WRITE);
	key = fi_mr_key(mr);
	fi_close(&mr->fid);
	for (int s = 0; s < SLICES; s++) {
		uint64_t t0 = now_ns();

		for (unsigned i = 0; i < per; i++) {
			mr = reg(f, buf, FI_WRITE);
			missed += fi_mr_key(mr) != key;
			fi_close(&mr->fid);
		}
		slice[s] = (now_ns() - t0) / per;
	}
	qsort(slice, SLICES, sizeof(slice[0]), cmp_u64);
	printf("hit fi_mr_reg+fi_close: median %" PRIu64 " ns (slices %" PRIu64 "..%" PRIu64
	       " ns, %u x %u), not hits %u\n",
	       slice[SLICES / 2], slice[0], slice[SLICES - 1], SLICES, per, missed);
	munmap(buf, LEN);
	return missed ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct fab f = { 0 };
	bool raw = false, expect_stale = false;
	unsigned iters;
	int rc;

	if (argc < 3 || (strcmp(argv[1], "churn") && strcmp(argv[1], "hit"))) {
		fprintf(stderr, "usage: fabric-churn churn|hit ITERS [--raw] [--expect-stale]\n");
		return 2;
	}
	iters = (unsigned)strtoul(argv[2], NULL, 0);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--raw")) {
			raw = true;
		} else if (!strcmp(argv[i], "--expect-stale")) {
			expect_stale = true;
		} else {
			fprintf(stderr, "fabric-churn: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (!iters) {
		fprintf(stderr, "fabric-churn: ITERS must be a positive number\n");
		return 2;
	}
	fab_open(&f);
	rc = argv[1][0] == 'c' ? churn(&f, iters, raw, expect_stale) : hit(&f, iters);
	fab_close(&f);
	printf("%s fabric-churn %s\n", rc ? "FAIL" : "PASS", argv[1]);
	return rc;
}
