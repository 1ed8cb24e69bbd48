/* SPDX-License-Identifier: MIT */
/*
 * bench-kdreg2: mrmon beside HPE's kdreg2 (HewlettPackard/shs-kdreg2), the
 * kernel monitor's closest anchor, driven through each module's own ioctls
 * in one run of the guest.  Built only with `make guest-bench
 * KDREG2_SRC=DIR` (mk/kdreg2.mk), which compiles kdreg2 out of this tree
 * and points the compiler at its public header; nothing of it is here.
 *
 * Figures per module (medians of rounds; TCG: compare within the run):
 *   watch, unwatch   ns per WATCH / MONITOR and UNWATCH / UNMONITOR of a page
 *                    (mrmon with MRMON_RANGE_SNAPSHOT, as the library
 *                    watches; mrmon-0 without, as kdreg2 has nothing like it)
 *   check            the hit check: mrmon's word, kdreg2_mapping_changed()
 *   munmap           of an unwatched and of a watched touched page,
 *                    alternating in one loop; ratio: median of the rounds
 *   reclaim          per region, after 1,000 watched pages were unmapped one
 *                    by one: read the events and free what the module left
 *                    (mrmon: UNWATCH in batches, as the library does;
 *                    kdreg2 frees an invalidated region itself)
 *   split            invalidations per real change: 10,000 watched pages
 *                    of THP memory (pinned), every other one unmapped;
 *                    mrmon also after REVALIDATE, as the library does
 *   fragmented       of 16 pinned watches of 16 pages over fragmented
 *                    memory, how many one mprotect() of a page 1 MiB away
 *                    invalidates (no page of theirs changed: ideal 0)
 *   contended        CONTEND_THREADS threads WATCH/UNWATCH pages of their
 *                    own on the same descriptor while the main thread
 *                    watches a page, unmaps it and reads its word right
 *                    after munmap() returns: how often it still reads
 *                    valid.  kdreg2 defers an invalidation to a workqueue
 *                    when its mutex is contended (since its 2025-12
 *                    change), so it can; mrmon must never (exit 1 if it
 *                    does)
 *   bench-kdreg2 [rounds]
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <pthread.h>
#include <unistd.h>
#include <kdreg2.h>
#include "mrmon_test.h"
#include "bench_util.h"

#define BATCH		200
#define RECLAIM_N	1000
#define SPLIT_N		10000
#define HUGE		(2ul << 20)
#define FRAG_PAGES	16
#define FRAG_WATCHES	16
#define EV_BATCH	256
#define CONTEND_THREADS	2
#define CONTEND_ROUNDS	2000

/* One watch: mrmon's slot and expected word, or kdreg2's cookie and
 * monitoring parameters. */
struct handle {
	uint64_t cookie;
	uint64_t a, b;
};

struct peer {
	const char *name;
	int (*open)(struct peer *p, uint32_t n);
	void (*close)(struct peer *p);
	int (*watch)(struct peer *p, void *addr, size_t len, struct handle *h);
	int (*unwatch)(struct peer *p, const struct handle *h);
	int (*intact)(const struct peer *p, const struct handle *h);
	/* Read every queued event and free what the module did not:
	 * returns the events read. */
	int (*reclaim)(struct peer *p);
	/* Re-arm the invalid watches whose pages did not change: how many
	 * came back.  NULL: the module cannot. */
	int (*revalidate)(struct peer *p, struct handle *h, int n);
	struct mon mon;
	int fd;
	const struct kdreg2_status_data *status;
	uint64_t next_cookie;
};

/* --- mrmon --- */

static int mrmon_open(struct peer *p, uint32_t n)
{
	return mon_open(&p->mon, n + 64, 16384);
}

static void mrmon_close(struct peer *p)
{
	mon_close(&p->mon);
}

static int mrmon_watch_flags(struct peer *p, void *addr, size_t len, struct handle *h,
			     uint32_t flags)
{
	uint32_t slot = 0;
	int rc = mon_watch_flags(&p->mon, addr, len, ++p->next_cookie, flags, &slot, &h->b);

	h->a = slot;
	return rc;
}

/* As the library watches (ABI 3 has no flags). */
static int mrmon_watch(struct peer *p, void *addr, size_t len, struct handle *h)
{
	return mrmon_watch_flags(p, addr, len, h, 0);
}

static int mrmon_unwatch(struct peer *p, const struct handle *h)
{
	return mon_unwatch(&p->mon, (uint32_t)h->a, h->b);
}

static int mrmon_intact(const struct peer *p, const struct handle *h)
{
	return mon_valid(&p->mon, (uint32_t)h->a, h->b);
}

/* ABI 3: the module freed each invalidated watch in its callback; the
 * reclaim only reads the events (no UNWATCH), as kdreg2's does. */
static int mrmon_reclaim(struct peer *p)
{
	static struct mrmon_event ev[EV_BATCH];
	int got, total = 0;

	while ((got = mon_events(&p->mon, ev, EV_BATCH)) > 0)
		total += got;
	return total;
}

/* --- kdreg2 --- */

static int kdreg2_open(struct peer *p, uint32_t n)
{
	struct kdreg2_config_data cfg = { .max_regions = n + 64 };

	p->fd = open(KDREG2_DEVICE_NAME, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (p->fd < 0)
		return -errno;
	if (ioctl(p->fd, KDREG2_IOCTL_CONFIG_DATA, &cfg) < 0) {
		close(p->fd);
		return -errno;
	}
	p->status = cfg.status_data;
	return 0;
}

static void kdreg2_close(struct peer *p)
{
	close(p->fd);
}

static int kdreg2_watch(struct peer *p, void *addr, size_t len, struct handle *h)
{
	struct kdreg2_ioctl_monitor m = { .addr = addr, .length = len, .cookie = ++p->next_cookie };

	if (ioctl(p->fd, KDREG2_IOCTL_MONITOR, &m) < 0)
		return -errno;
	h->cookie = m.cookie;
	h->a = m.monitoring_params.location;
	h->b = m.monitoring_params.generation;
	return 0;
}

static int kdreg2_unwatch(struct peer *p, const struct handle *h)
{
	struct kdreg2_ioctl_unmonitor u = {
		.cookie = h->cookie,
		.monitoring_params = { .location = h->a, .generation = (uint32_t)h->b },
	};

	return ioctl(p->fd, KDREG2_IOCTL_UNMONITOR, &u) < 0 ? -errno : 0;
}

static int kdreg2_intact(const struct peer *p, const struct handle *h)
{
	struct kdreg2_monitoring_params mp = { .location = h->a, .generation = (uint32_t)h->b };

	return !kdreg2_mapping_changed(p->status, &mp);
}

static int kdreg2_reclaim(struct peer *p)
{
	static struct kdreg2_event ev[EV_BATCH];
	int total = 0;
	ssize_t got;

	while (kdreg2_read_counter(&p->status->pending_events) &&
	       (got = read(p->fd, ev, sizeof(ev))) > 0)
		total += (int)(got / (ssize_t)sizeof(ev[0]));
	return total;
}

static struct peer peers[] = {
	{ .name = "mrmon", .open = mrmon_open, .close = mrmon_close, .watch = mrmon_watch,
	  .unwatch = mrmon_unwatch, .intact = mrmon_intact, .reclaim = mrmon_reclaim },
	{ .name = "kdreg2", .open = kdreg2_open, .close = kdreg2_close, .watch = kdreg2_watch,
	  .unwatch = kdreg2_unwatch, .intact = kdreg2_intact, .reclaim = kdreg2_reclaim },
};

/* --- the figures --- */

static void watch_cost(struct peer *p, int rounds, double *watch, double *unwatch)
{
	static struct handle h[BATCH];
	char *area = mon_map_anon(BATCH * PAGE);
	double vw[rounds], vu[rounds];

	for (int r = 0; r < rounds; r++) {
		double t0 = now_ns(), t1;

		for (int i = 0; i < BATCH; i++)
			p->watch(p, area + i * PAGE, PAGE, &h[i]);
		t1 = now_ns();
		for (int i = 0; i < BATCH; i++)
			p->unwatch(p, &h[i]);
		vw[r] = (t1 - t0) / BATCH;
		vu[r] = (now_ns() - t1) / BATCH;
	}
	munmap(area, BATCH * PAGE);
	*watch = median(vw, rounds);
	*unwatch = median(vu, rounds);
}

static double check_cost(struct peer *p)
{
	char *page = mon_map_anon(PAGE);
	volatile int sink = 0;
	struct handle h;
	double t0;

	p->watch(p, page, PAGE, &h);
	t0 = now_ns();
	for (int i = 0; i < 1000000; i++)
		sink += p->intact(p, &h);
	t0 = (now_ns() - t0) / 1e6;
	p->unwatch(p, &h);
	munmap(page, PAGE);
	return t0 + 0 * sink;
}

/* Unwatched and watched pages alternate in one loop, so that both see
 * the same load (TCG on a shared host): *bare, *watched in ns, and the
 * median of the rounds' ratios. */
static double munmap_cost(struct peer *p, int rounds, double *bare, double *watched)
{
	double vb[rounds], vw[rounds], ratio[rounds];

	for (int r = 0; r < rounds; r++) {
		double t[2] = { 0, 0 };

		for (int i = 0; i < BATCH / 2; i++) {
			char *page = mon_map_anon(PAGE);
			struct handle h;
			double t0;

			if (i % 2)
				p->watch(p, page, PAGE, &h);
			t0 = now_ns();
			munmap(page, PAGE);
			t[i % 2] += now_ns() - t0;
			p->reclaim(p);
		}
		vb[r] = t[0] / (BATCH / 4);
		vw[r] = t[1] / (BATCH / 4);
		ratio[r] = vw[r] / vb[r];
	}
	*bare = median(vb, rounds);
	*watched = median(vw, rounds);
	return median(ratio, rounds);
}

static double reclaim_cost(struct peer *p, int rounds)
{
	static struct handle h[RECLAIM_N];
	double v[rounds];

	for (int r = 0; r < rounds; r++) {
		char *area = mon_map_anon(2 * RECLAIM_N * PAGE);
		double t0;
		int got;

		for (int i = 0; i < RECLAIM_N; i++)
			p->watch(p, area + 2 * i * PAGE, PAGE, &h[i]);
		for (int i = 0; i < RECLAIM_N; i++)
			munmap(area + 2 * i * PAGE, PAGE);
		t0 = now_ns();
		got = p->reclaim(p);
		v[r] = (now_ns() - t0) / RECLAIM_N;
		if (got < RECLAIM_N)
			printf("%s: only %d events for %d unmaps\n", p->name, got, RECLAIM_N);
		munmap(area, 2 * RECLAIM_N * PAGE);
	}
	return median(v, rounds);
}

/* Pin [iov] as a cache does (io_uring fixed buffers). */
static int pin(struct io_uring *ring, const struct iovec *iov, unsigned n)
{
	int rc = io_uring_queue_init(4, ring, 0);

	if (!rc)
		rc = io_uring_register_buffers(ring, iov, n);
	return rc;
}

static void split(struct peer *p)
{
	static struct handle h[SPLIT_N];
	static struct iovec iov[SPLIT_N];
	size_t len = SPLIT_N * PAGE;
	char *raw, *area = mon_map_window(len, 5, &raw);
	struct io_uring ring;
	int invalid = 0, rearmed = -1;

	for (int i = 0; i < SPLIT_N; i++) {
		iov[i] = (struct iovec){ area + i * PAGE, PAGE };
		p->watch(p, area + i * PAGE, PAGE, &h[i]);
	}
	if (pin(&ring, iov, SPLIT_N))
		printf("%s: split: cannot pin: %s\n", p->name, strerror(errno));
	for (int i = 1; i < SPLIT_N; i += 2)
		munmap(area + i * PAGE, PAGE);
	for (int i = 0; i < SPLIT_N; i++)
		invalid += !p->intact(p, &h[i]);
	if (p->revalidate)
		rearmed = p->revalidate(p, h, SPLIT_N);
	printf("%-7s split: %d invalidations for %d real changes (%.3f per change)",
	       p->name, invalid, SPLIT_N / 2, invalid / (SPLIT_N / 2.0));
	if (rearmed >= 0)
		printf("; after REVALIDATE %.3f", (invalid - rearmed) / (SPLIT_N / 2.0));
	printf("\n");
	io_uring_queue_exit(&ring);
	p->reclaim(p);
	for (int i = 0; i < SPLIT_N; i += 2)
		p->unwatch(p, &h[i]);
	munmap(raw, len + HUGE);
}

/* Neighbouring pages of the window get PFNs two allocations apart. */
static void fault_fragmented(char *area)
{
	char *scratch = mmap(NULL, HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	madvise(area, HUGE, MADV_NOHUGEPAGE);
	madvise(scratch, HUGE, MADV_NOHUGEPAGE);
	for (long i = HUGE / PAGE - 1; i >= 0; i--) {
		area[i * PAGE] = (char)i;
		scratch[i * PAGE] = 1;
	}
	munmap(scratch, HUGE);
}

static void fragmented(struct peer *p)
{
	char *raw = mmap(NULL, 2 * HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *area = (char *)(((uintptr_t)raw + HUGE - 1) & ~(HUGE - 1));
	struct handle h[FRAG_WATCHES];
	struct iovec iov[FRAG_WATCHES];
	struct io_uring ring;
	int invalid = 0, rearmed = -1;

	fault_fragmented(area);
	for (int i = 0; i < FRAG_WATCHES; i++) {
		iov[i] = (struct iovec){ area + i * FRAG_PAGES * PAGE, FRAG_PAGES * PAGE };
		p->watch(p, iov[i].iov_base, iov[i].iov_len, &h[i]);
	}
	pin(&ring, iov, FRAG_WATCHES);
	mprotect(area + HUGE / 2 + 8 * PAGE, PAGE, PROT_READ);
	for (int i = 0; i < FRAG_WATCHES; i++)
		invalid += !p->intact(p, &h[i]);
	if (p->revalidate)
		rearmed = p->revalidate(p, h, FRAG_WATCHES);
	printf("%-7s fragmented: %d of %d watches invalidated by a split 1 MiB away",
	       p->name, invalid, FRAG_WATCHES);
	if (rearmed >= 0)
		printf("; after REVALIDATE %d", invalid - rearmed);
	printf("\n");
	io_uring_queue_exit(&ring);
	p->reclaim(p);
	for (int i = 0; i < FRAG_WATCHES; i++)
		if (p->intact(p, &h[i]))
			p->unwatch(p, &h[i]);
	munmap(raw, 2 * HUGE);
}

struct churn {
	struct peer *p;
	int stop;
	long ops;
};

/* Keep the descriptor's lock busy: watch and unwatch a page of our own. */
static void *churn_thread(void *arg)
{
	struct churn *ch = arg;
	char *page = mon_map_anon(PAGE);
	struct handle h;

	while (!__atomic_load_n(&ch->stop, __ATOMIC_RELAXED)) {
		if (!ch->p->watch(ch->p, page, PAGE, &h)) {
			ch->p->unwatch(ch->p, &h);
			ch->ops++;
		}
	}
	munmap(page, PAGE);
	return NULL;
}

/* How many of CONTEND_ROUNDS unmapped pages still read valid right after
 * munmap() returned, with CONTEND_THREADS threads contending. */
static int contended(struct peer *p)
{
	struct churn ch[CONTEND_THREADS];
	pthread_t tid[CONTEND_THREADS];
	int valid = 0, rounds = 0;
	long ops = 0;

	for (int i = 0; i < CONTEND_THREADS; i++) {
		ch[i] = (struct churn){ .p = p };
		pthread_create(&tid[i], NULL, churn_thread, &ch[i]);
	}
	for (int i = 0; i < CONTEND_ROUNDS; i++) {
		char *page = mon_map_anon(PAGE);
		struct handle h;

		page[0] = 1;
		if (p->watch(p, page, PAGE, &h) || !p->intact(p, &h)) {
			munmap(page, PAGE);
			continue;	/* not armed (an invalidation in flight) */
		}
		munmap(page, PAGE);
		valid += p->intact(p, &h);
		rounds++;
		if (i % 64 == 63)
			p->reclaim(p);
	}
	for (int i = 0; i < CONTEND_THREADS; i++) {
		__atomic_store_n(&ch[i].stop, 1, __ATOMIC_RELAXED);
		pthread_join(tid[i], NULL);
		ops += ch[i].ops;
	}
	p->reclaim(p);
	printf("contended %-7s valid after munmap: %d of %d (%d threads, %ld watch+unwatch)\n",
	       p->name, valid, rounds, CONTEND_THREADS, ops);
	return valid;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 9;
	unsigned n = sizeof(peers) / sizeof(peers[0]);

	printf("%-7s %10s %10s %9s %12s %12s %8s %11s\n", "module", "watch", "unwatch",
	       "check", "munmap bare", "munmap watch", "ratio", "reclaim");
	for (unsigned k = 0; k < n; k++) {
		struct peer *p = &peers[k];
		double w, u, bare, watched, ratio;
		int rc = p->open(p, SPLIT_N);

		if (rc) {
			printf("%-7s cannot open: %s\n", p->name, strerror(-rc));
			return 1;
		}
		watch_cost(p, rounds, &w, &u);
		ratio = munmap_cost(p, rounds, &bare, &watched);
		printf("%-7s %7.0f ns %7.0f ns %6.2f ns %9.0f ns %9.0f ns %8.2f %8.0f ns\n", p->name,
		       w, u, check_cost(p), bare, watched, ratio, reclaim_cost(p, rounds));
		p->close(p);
	}
	for (unsigned k = 0; k < n; k++) {
		struct peer *p = &peers[k];

		if (p->open(p, SPLIT_N))
			return 1;
		split(p);
		fragmented(p);
		p->close(p);
	}
	for (unsigned k = 0; k < n; k++) {
		struct peer *p = &peers[k];
		int valid;

		if (p->open(p, SPLIT_N))
			return 1;
		valid = contended(p);
		p->close(p);
		if (valid && !strcmp(p->name, "mrmon"))
			return 1;
	}
	return 0;
}
