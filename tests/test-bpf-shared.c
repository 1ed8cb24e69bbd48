/* SPDX-License-Identifier: MIT */
/*
 * The bpf monitor loads one program set per process, whatever the number
 * of caches: four caches hold the programs and links of one (distinct
 * program ids among this process's descriptors, /proc/self/fdinfo), and
 * each cache still gets its own invalidations, checked with the io_uring
 * stale-data oracle:
 *  - unmapping one cache's buffer makes that cache miss and read fresh
 *    data, while the other caches keep hitting their own buffers;
 *  - unmapping a buffer cached by all four makes every one miss, fresh,
 *    the last ones after another cache's drain took their events;
 *  - after three destroys the set is still there; after the fourth, gone.
 * Controls: the count is above zero after the first create and zero after
 * the last destroy (it sees a set come and go); a cache with monitor none
 * hits the same unmapped buffer and reads stale data.
 * Under MRCACHE_MONITOR=kernel (the guest) only the invalidations run.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "bpf-test.h"
#include "guarantee.h"
#include "oracle.h"
#include "testutil.h"

#define NCACHES 4
#define LEN (64 * 1024)
#define MAX_IDS 64

/* Distinct ids of this process's bpf programs (kind "prog") or links. */
static int count_ids(const char *kind)
{
	char path[300], target[64], info[2048], key[32];
	unsigned ids[MAX_IDS];
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *d;
	int n = 0;

	snprintf(key, sizeof(key), "%s_id:", kind);
	while (dir && (d = readdir(dir))) {
		ssize_t len;
		unsigned id;
		char *at;
		FILE *f;
		int seen = 0;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strncmp(target, "anon_inode:bpf", 14))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", d->d_name);
		f = fopen(path, "r");
		len = f ? (ssize_t)fread(info, 1, sizeof(info) - 1, f) : 0;
		if (f)
			fclose(f);
		info[len > 0 ? len : 0] = 0;
		at = strstr(info, key);
		if (!at || (!strcmp(kind, "prog") && strstr(info, "link_type:")))
			continue;
		id = (unsigned)strtoul(at + strlen(key), NULL, 10);
		for (int i = 0; i < n; i++)
			seen |= ids[i] == id;
		if (!seen && n < MAX_IDS)
			ids[n++] = id;
	}
	if (dir)
		closedir(dir);
	return n;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The buffer at addr replaced by fresh pages at the same address. */
static void replace(void *addr)
{
	CHECK(munmap(addr, LEN) == 0);
	CHECK(guarantee_map(addr, LEN, 0) == addr);
}

/* A probe that must miss (or hit) and read fresh data. */
static void expect(struct oracle *o, struct mrcache *c, void *addr, int miss, const char *what)
{
	int missed = -1, v = oracle_probe(o, c, addr, LEN, &missed);

	if (v != ORACLE_FRESH || missed != miss) {
		fprintf(stderr, "%s: %s, %s (expected %s, fresh)\n", what,
			missed ? "missed" : "hit", v == ORACLE_STALE ? "STALE" : "fresh",
			miss ? "a miss" : "a hit");
		test_failures++;
	}
}

int main(void)
{
	struct oracle o[NCACHES + 1];
	struct mrcache_config cfg;
	struct mrcache *c[NCACHES + 1];
	char *own[NCACHES], *all;
	const char *monitor;
	enum mrcache_monitor_kind kind;
	int progs = 0, links = 0, bpf, missed, rc;
	double t0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	bpf_test_pick_monitor();
	monitor = getenv("MRCACHE_MONITOR");
	bpf = !strcmp(monitor, "bpf");
	CHECK_EQ(mrcache_monitor_parse(monitor, &kind), 0);
	for (int i = 0; i <= NCACHES; i++)
		if (oracle_init(&o[i], 1, LEN))
			SKIP("io_uring is not usable here");
	if (bpf)
		CHECK_EQ(count_ids("prog"), 0);
	for (int i = 0; i < NCACHES; i++) {
		oracle_config(&o[i], &cfg, kind, 64);
		t0 = now_ms();
		rc = mrcache_create(&cfg, &c[i]);
		if (rc && i == 0)
			SKIP("monitor %s does not start here (%s)", monitor, strerror(-rc));
		CHECK_EQ(rc, 0);
		printf("cache %d: create %.2f ms", i + 1, now_ms() - t0);
		if (bpf) {
			if (i == 0) {
				progs = count_ids("prog");
				links = count_ids("link");
			}
			printf(", %d programs, %d links", count_ids("prog"), count_ids("link"));
			CHECK(progs > 0 && links > 0);
			CHECK_EQ(count_ids("prog"), progs);
			CHECK_EQ(count_ids("link"), links);
		}
		printf("\n");
	}
	oracle_config(&o[NCACHES], &cfg, MRCACHE_MONITOR_NONE, 64);
	CHECK_EQ(mrcache_create(&cfg, &c[NCACHES]), 0);

	all = guarantee_map(NULL, LEN, 0);
	CHECK(all != NULL);
	for (int i = 0; i < NCACHES; i++) {
		own[i] = guarantee_map(NULL, LEN, 0);
		CHECK(own[i] != NULL);
		expect(&o[i], c[i], own[i], 1, "first get of a cache's own buffer");
		expect(&o[i], c[i], own[i], 0, "second get of a cache's own buffer");
		expect(&o[i], c[i], all, 1, "first get of the common buffer");
	}
	CHECK_EQ(oracle_probe(&o[NCACHES], c[NCACHES], all, LEN, &missed), ORACLE_FRESH);

	replace(own[2]);
	expect(&o[2], c[2], own[2], 1, "cache 3 after its buffer was replaced");
	for (int i = 0; i < NCACHES; i++)
		if (i != 2)
			expect(&o[i], c[i], own[i], 0, "another cache's own buffer");
	printf("one cache's buffer replaced: that cache missed, fresh; the others hit\n");

	replace(all);
	for (int i = 0; i < NCACHES; i++)
		expect(&o[i], c[i], all, 1, "the common buffer after it was replaced");
	printf("the common buffer replaced: all four missed, fresh\n");
	CHECK_EQ(oracle_probe(&o[NCACHES], c[NCACHES], all, LEN, &missed), ORACLE_STALE);
	CHECK_EQ(missed, 0);
	printf("control: monitor none hit it, stale\n");

	for (int i = 0; i <= NCACHES; i++) {
		CHECK_EQ(mrcache_destroy(c[i]), 0);
		if (bpf && i < NCACHES)
			CHECK_EQ(count_ids("prog"), i < NCACHES - 1 ? progs : 0);
	}
	if (bpf)
		printf("programs after the last bpf destroy: %d (control)\n", count_ids("prog"));
	for (int i = 0; i <= NCACHES; i++)
		oracle_fini(&o[i]);
	return test_result();
}
