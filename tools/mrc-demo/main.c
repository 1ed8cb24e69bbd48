/* SPDX-License-Identifier: MIT */
/*
 * mrc-demo - the stale-registration hazard, then the fix.
 *
 * One workload, run once per monitor: malloc a 2 MiB buffer, get its
 * registration from the cache (an io_uring fixed buffer: the kernel pins
 * its pages), read a message from a file into it with READ_FIXED, look at
 * what the application sees, put, free.  glibc unmaps the block on free and
 * the next malloc maps fresh pages at the same address.  Without a monitor
 * the cache hands back the old registration and the message lands in the
 * freed pages; with one, the cache notices the free and registers again.
 *
 * Exit 0 when `none` showed the hazard and every monitor that starts here
 * kept every round correct.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <liburing.h>
#include "mrcache.h"

#define BUF_LEN (2u << 20)	/* above the mmap threshold set below */
#define MSG_LEN 48
#define ROUNDS 4

struct demo {
	struct io_uring ring;
	int fd;			/* the "disk": one message per round */
};

struct outcome {
	int started;
	char why[64];
	int reused;		/* rounds where malloc gave the same address */
	int wrong;		/* rounds where the application missed its data */
	struct mrcache_stats st;
};

static int demo_read(struct demo *d, struct mrcache_region *r, char *buf,
		     int round)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_read_fixed(sqe, d->fd, buf, MSG_LEN,
				 (uint64_t)round * MSG_LEN,
				 (int)mrcache_region_key(r));
	ret = io_uring_submit_and_wait(&d->ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(&d->ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(&d->ring, cqe);
	return ret == MSG_LEN ? 0 : (ret < 0 ? ret : -EIO);
}

static void show(const char *label, const char *p)
{
	static const char zeros[24];

	if (memcmp(p, zeros, sizeof(zeros)) == 0) {
		printf("      %-22s zeros: fresh memory nobody wrote to\n", label);
		return;
	}
	printf("      %-22s \"", label);
	for (int i = 0; i < 24; i++)
		putchar(p[i] >= 32 && p[i] < 127 ? p[i] : '.');
	printf("...\"\n");
}

/* The workload under one monitor; verbose for the first monitor only. */
static int run(struct demo *d, enum mrcache_monitor_kind m, int verbose,
	       struct outcome *out)
{
	struct mrcache_config cfg;
	struct mrcache *cache;
	void *prev = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	mrcache_config_init(&cfg);
	cfg.backend = MRCACHE_BACKEND_URING;
	cfg.ring = &d->ring;
	cfg.monitor = m;
	cfg.flags |= MRCACHE_FLAG_NO_ENV;
	ret = mrcache_create(&cfg, &cache);
	if (ret) {
		snprintf(out->why, sizeof(out->why), "cannot start here: %s",
			 strerror(-ret));
		return 0;
	}
	out->started = 1;
	for (int round = 0; round < ROUNDS; round++) {
		char *buf = malloc(BUF_LEN);
		struct mrcache_region *r;
		char expect[MSG_LEN];
		int wrong;

		if (!buf)
			return -ENOMEM;
		ret = mrcache_get(cache, buf, BUF_LEN, MRCACHE_ACCESS_LOCAL_WRITE, &r);
		if (!ret) {
			ret = demo_read(d, r, buf, round);
			mrcache_put(cache, r);
		}
		if (ret) {
			free(buf);
			mrcache_destroy(cache);
			return ret;
		}
		if (pread(d->fd, expect, MSG_LEN, (off_t)round * MSG_LEN) != MSG_LEN)
			return -EIO;
		wrong = memcmp(buf, expect, MSG_LEN) != 0;
		out->reused += buf == prev;
		out->wrong += wrong;
		if (verbose) {
			printf("  round %d: malloc -> %p%s, io_uring buffer #%llu\n",
			       round + 1, (void *)buf,
			       buf == prev ? " (same address as last round)" : "",
			       (unsigned long long)mrcache_region_key(r));
			show("the file holds", expect);
			show("the application sees", buf);
			if (wrong)
				printf("      WRONG: the cache returned the registration of the first buffer,\n"
				       "      whose pages were freed; the read went there, not into this one.\n");
		}
		prev = buf;
		free(buf);
	}
	mrcache_stats_get(cache, &out->st);
	return mrcache_destroy(cache);
}

static uint64_t invalidations(const struct mrcache_stats *st)
{
	uint64_t n = 0;

	for (int c = 0; c < MRCACHE_CAUSE_COUNT_; c++)
		n += st->invalidations[c];
	return n;
}

static int demo_init(struct demo *d)
{
	char msg[MSG_LEN + 1];
	int ret;

	ret = io_uring_queue_init(4, &d->ring, 0);
	if (ret < 0) {
		fprintf(stderr, "mrc-demo: io_uring unavailable: %s\n", strerror(-ret));
		return ret;
	}
	d->fd = memfd_create("mrc-demo-disk", MFD_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	for (int round = 0; round < ROUNDS; round++) {
		snprintf(msg, sizeof(msg), "message %d from the disk, fresh ##############",
			 round + 1);
		if (pwrite(d->fd, msg, MSG_LEN, (off_t)round * MSG_LEN) != MSG_LEN)
			return -errno;
	}
	return 0;
}

static void usage(FILE *f)
{
	fputs("usage: mrc-demo [--help]\n"
	      "Exit 0 when monitor none showed stale data and every monitor that starts\n"
	      "here kept every round correct, 1 when not, 2 on an error.\n", f);
}

static void help(void)
{
	printf("mrc-demo - the stale-registration hazard, then the fix\n\n"
	       "Each round mallocs a 2 MiB buffer, gets its registration from the cache\n"
	       "(an io_uring fixed buffer), reads a message into it with READ_FIXED and\n"
	       "frees it; once per monitor.  Without one the cache hands back the freed\n"
	       "buffer's registration and the read lands in the freed pages; with one it\n"
	       "registers the new pages.\n\n");
	usage(stdout);
}

/* -1: run the demo; otherwise the exit status. */
static int parse_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help();
			return 0;
		}
		fprintf(stderr, "mrc-demo: unknown %s '%s'\n",
			argv[i][0] == '-' ? "option" : "argument", argv[i]);
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	static const enum mrcache_monitor_kind monitors[] = {
		MRCACHE_MONITOR_NONE, MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_KERNEL,
	};
	struct outcome res[sizeof(monitors) / sizeof(monitors[0])];
	int hazard_shown = 0, fixed = 0, broken = 0;
	struct demo d;
	int rc = parse_args(argc, argv);

	if (rc >= 0)
		return rc;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A fixed threshold: every 2 MiB block is its own mapping, unmapped by
	 * free() and mapped again by the next malloc, at the same address. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	if (demo_init(&d))
		return 2;

	printf("mrcache demo: a registration cache must notice freed memory\n\n"
	       "Each round mallocs a 2 MiB buffer, gets its registration from the cache\n"
	       "(an io_uring fixed buffer: the kernel pins its pages), reads a message\n"
	       "from a file into it with READ_FIXED, then frees it.\n\n"
	       "With monitor none, the cache is never told about free():\n");
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++) {
		int ret = run(&d, monitors[i], i == 0, &res[i]);

		if (ret) {
			fprintf(stderr, "mrc-demo: %s: %s\n",
				mrcache_monitor_name(monitors[i]), strerror(-ret));
			return 2;
		}
	}

	printf("\nThe same rounds under every monitor:\n\n"
	       "  %-7s %-30s %5s %7s %14s\n", "monitor", "result", "hits",
	       "misses", "invalidations");
	for (size_t i = 0; i < sizeof(monitors) / sizeof(monitors[0]); i++) {
		struct outcome *o = &res[i];
		char result[64];

		if (!o->started) {
			printf("  %-7s %s\n", mrcache_monitor_name(monitors[i]), o->why);
			continue;
		}
		if (o->wrong)
			snprintf(result, sizeof(result), "WRONG data in %d of %d rounds",
				 o->wrong, ROUNDS);
		else
			snprintf(result, sizeof(result), "correct in %d of %d rounds",
				 ROUNDS, ROUNDS);
		printf("  %-7s %-30s %5llu %7llu %14llu\n",
		       mrcache_monitor_name(monitors[i]), result,
		       (unsigned long long)(o->st.hits + o->st.subrange_hits),
		       (unsigned long long)o->st.misses,
		       (unsigned long long)invalidations(&o->st));
		if (monitors[i] == MRCACHE_MONITOR_NONE)
			hazard_shown = o->wrong > 0;
		else if (o->wrong)
			broken++;
		else
			fixed++;
	}

	printf("\n");
	if (!hazard_shown && !res[0].reused)
		printf("malloc never returned a freed address here (not glibc's allocator?):\n"
		       "nothing for a stale registration to hit.\n");
	else if (!hazard_shown)
		printf("UNEXPECTED: monitor none did not show the hazard.\n");
	if (broken)
		printf("FAILED: %d monitor(s) handed out a stale registration.\n", broken);
	if (!fixed)
		printf("No monitor could start here, so the fix could not be shown.\n");
	if (hazard_shown && !broken && fixed)
		printf("Without a monitor the cache returned stale registrations; every monitor\n"
		       "that runs here invalidated them when free() returned (misses instead of hits).\n");
	close(d.fd);
	io_uring_queue_exit(&d.ring);
	return hazard_shown && !broken && fixed ? 0 : 1;
}
