/* SPDX-License-Identifier: MIT */
/*
 * The first bpf cache of the process created from a thread that is not
 * the main one.  libbpf runs in a link-map namespace of its own, with its
 * own libc, whose locale tables exist only for the thread that loaded it:
 * libbpf's first isspace() in another thread crashed (SIGSEGV in
 * bpf_object__open_skeleton).  Then again after the last cache went and
 * the programs were unloaded.
 */
#include <pthread.h>
#include <string.h>
#include "bpf-test.h"
#include "oracle.h"
#include "testutil.h"

static void *create_one(void *arg)
{
	int *rc = arg;
	struct mrcache_config cfg;
	struct mrcache *c;
	struct oracle o;

	if (oracle_init(&o, 1, 4096)) {
		*rc = 77;
		return NULL;
	}
	oracle_config(&o, &cfg, MRCACHE_MONITOR_BPF, 16);
	*rc = mrcache_create(&cfg, &c);
	if (!*rc)
		mrcache_destroy(c);
	oracle_fini(&o);
	return NULL;
}

int main(void)
{
	for (int i = 0; i < 2; i++) {
		pthread_t t;
		int rc = -1;

		CHECK_EQ(pthread_create(&t, NULL, create_one, &rc), 0);
		pthread_join(t, NULL);
		if (rc == 77)
			SKIP("io_uring is unusable here");
		if (rc && !i)
			SKIP("the bpf monitor cannot start here: %s", strerror(-rc));
		CHECK_EQ(rc, 0);
	}
	return test_result();
}
