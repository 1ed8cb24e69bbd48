/* SPDX-License-Identifier: MIT */
/* testbackend.c - see testbackend.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "testbackend.h"
#include "testutil.h"

struct test_backend_reg {
	struct test_backend_reg *next;
	uintptr_t start, end;
	uint64_t key;
};

void test_backend_init(struct test_backend *tb, unsigned max_live)
{
	memset(tb, 0, sizeof(*tb));
	pthread_mutex_init(&tb->lock, NULL);
	tb->max_live = max_live;
	tb->next_key = 1;
}

unsigned test_backend_fini(struct test_backend *tb)
{
	unsigned leaked = 0;

	while (tb->head) {
		struct test_backend_reg *r = tb->head;

		tb->head = r->next;
		free(r);
		leaked++;
	}
	pthread_mutex_destroy(&tb->lock);
	return leaked;
}

void test_backend_config(struct test_backend *tb, struct mrcache_config *cfg,
			 enum mrcache_monitor_kind monitor)
{
	mrcache_config_init(cfg);
	cfg->backend = MRCACHE_BACKEND_CALLBACKS;
	cfg->ops = &test_backend_ops;
	cfg->ops_arg = tb;
	cfg->monitor = monitor;
	cfg->flags |= MRCACHE_FLAG_NO_ENV;
}

struct mrcache *test_backend_cache_or_skip(struct test_backend *tb, struct mrcache_config *cfg,
					   enum mrcache_monitor_kind monitor)
{
	struct mrcache *c;
	int rc;

	test_backend_init(tb, 0);
	test_backend_config(tb, cfg, monitor);
	rc = mrcache_create(cfg, &c);
	if (rc)
		SKIP("monitor %s cannot start here: %s", mrcache_monitor_name(monitor), strerror(-rc));
	return c;
}

void test_backend_fail(struct test_backend *tb, int err, unsigned count)
{
	pthread_mutex_lock(&tb->lock);
	tb->fail_err = err;
	tb->fail_count = count;
	pthread_mutex_unlock(&tb->lock);
}

int test_backend_covers(struct test_backend *tb, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	int found = 0;

	pthread_mutex_lock(&tb->lock);
	for (struct test_backend_reg *r = tb->head; r && !found; r = r->next)
		found = r->start <= a && a + len <= r->end;
	pthread_mutex_unlock(&tb->lock);
	return found;
}

static int tb_reg(void *arg, void *addr, size_t len, unsigned access,
		  void **handle, uint64_t *key)
{
	struct test_backend *tb = arg;
	struct test_backend_reg *r;
	int ret = 0;

	r = malloc(sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_lock(&tb->lock);
	if (tb->fail_count) {
		tb->fail_count--;
		ret = tb->fail_err;
	} else if (tb->max_live && tb->live >= tb->max_live) {
		ret = -ENOSPC;
	}
	if (ret) {
		tb->failed_regs++;
		pthread_mutex_unlock(&tb->lock);
		free(r);
		return ret;
	}
	r->start = (uintptr_t)addr;
	r->end = r->start + len;
	r->key = tb->next_key++;
	r->next = tb->head;
	tb->head = r;
	tb->regs++;
	tb->live++;
	tb->live_bytes += len;
	pthread_mutex_unlock(&tb->lock);
	*handle = r;
	*key = r->key;
	return 0;
}

static int tb_dereg(void *arg, void *handle)
{
	struct test_backend *tb = arg;
	struct test_backend_reg **pp;

	pthread_mutex_lock(&tb->lock);
	for (pp = &tb->head; *pp && *pp != handle; pp = &(*pp)->next)
		;
	if (!*pp) {
		tb->bad_deregs++;
		pthread_mutex_unlock(&tb->lock);
		return -EINVAL;
	}
	*pp = ((struct test_backend_reg *)handle)->next;
	tb->deregs++;
	tb->live--;
	tb->live_bytes -= ((struct test_backend_reg *)handle)->end -
			  ((struct test_backend_reg *)handle)->start;
	pthread_mutex_unlock(&tb->lock);
	free(handle);
	return 0;
}

const struct mrcache_backend_ops test_backend_ops = {
	.reg = tb_reg,
	.dereg = tb_dereg,
};
