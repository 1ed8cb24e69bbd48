/* SPDX-License-Identifier: MIT */
/*
 * probe.c - which monitors start here: the library's own answer, from
 * starting each one on a throw-away cache and listening to what the
 * library says (mrcache_set_log) when it cannot.  This is what a program's
 * mrcache_create() would do, so it cannot disagree with it.
 */
#include <errno.h>
#include <string.h>
#include "info.h"

struct capture {
	char *buf;
	size_t len, used;
	const char *only;	/* NULL: every message; else the last one
				 * starting with this, without it */
};

static void collect(void *arg, int level, const char *msg)
{
	struct capture *c = arg;
	int n;

	if (c->only) {
		if (!strncmp(msg, c->only, strlen(c->only)))
			snprintf(c->buf, c->len, "%s", msg + strlen(c->only));
		return;
	}
	if (c->used + 1 >= c->len)
		return;
	n = snprintf(c->buf + c->used, c->len - c->used, "%s%s", c->used ? "; " : "", msg);
	if (n > 0)
		c->used += (size_t)n < c->len - c->used ? (size_t)n : c->len - c->used - 1;
}

/* fn(arg) with the library's messages up to level collected in c. */
static int capture_run(int (*fn)(void *), void *arg, int level, struct capture c)
{
	int rc;

	c.buf[0] = 0;
	mrcache_set_log(collect, &c, level);
	rc = fn(arg);
	mrcache_set_log(NULL, NULL, MRCACHE_LOG_ERROR);
	return rc;
}

int info_capture(int (*fn)(void *), void *arg, int level, char *buf, size_t len)
{
	return capture_run(fn, arg, level, (struct capture){ buf, len, 0, NULL });
}

static int pin_nothing(void *arg, void *addr, size_t len, unsigned access,
		       void **handle, uint64_t *key)
{
	*handle = addr;
	*key = 0;
	return 0;
}

static int unpin_nothing(void *arg, void *handle)
{
	return 0;
}

static const struct mrcache_backend_ops nothing_ops = { pin_nothing, unpin_nothing };

int info_try_cache(struct mrcache_config *cfg, struct mrcache_config *config)
{
	struct mrcache *cache;
	int rc;

	cfg->backend = MRCACHE_BACKEND_CALLBACKS;
	cfg->ops = &nothing_ops;
	rc = mrcache_create(cfg, &cache);
	if (rc)
		return rc;
	if (config)
		rc = mrcache_config_get(cache, config);
	mrcache_destroy(cache);
	return rc;
}

static int try_monitor(void *arg)
{
	struct mrcache_config cfg;

	mrcache_config_init(&cfg);
	cfg.monitor = *(const enum mrcache_monitor_kind *)arg;
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	return info_try_cache(&cfg, NULL);
}

/* Why a monitor did not start: the library's own reasons, without the
 * summary line that only repeats the errno, unless it is all there is. */
static const char *reason(char *said, enum mrcache_monitor_kind kind)
{
	char generic[64];
	char *p, *next;

	snprintf(generic, sizeof(generic), "monitor %s cannot start: ", mrcache_monitor_name(kind));
	p = strstr(said, generic);
	next = p ? strstr(p, "; ") : NULL;
	if (next)
		memmove(p, next + 2, strlen(next + 2) + 1);
	else if (p && p != said)
		p[-2] = 0;
	return said[0] ? said : "(no message)";
}

static const char *const notes[MRCACHE_MONITOR_COUNT_] = {
	[MRCACHE_MONITOR_HOOKS] = "in programs linked with -lmrcache-hooks or with "
				  "libmrcache-hooks.so preloaded (mrcache-info is)",
	[MRCACHE_MONITOR_NONE] = "manual mrcache_invalidate() only: registrations can go stale",
};

static int try_auto(void *arg)
{
	struct mrcache_config cfg;

	(void)arg;
	mrcache_config_init(&cfg);
	cfg.flags = MRCACHE_FLAG_NO_ENV;
	return info_try_cache(&cfg, NULL);
}

/* What `auto` takes here and why: the library's own line, from a create
 * with it (MRCACHE_AUTO_BPF is read under MRCACHE_FLAG_NO_ENV too). */
static void info_auto(FILE *out)
{
	char line[1024];
	int rc = capture_run(try_auto, NULL, MRCACHE_LOG_INFO,
			     (struct capture){ line, sizeof(line), 0, "auto: " });

	if (!line[0])
		snprintf(line, sizeof(line), "%s", rc ? strerror(-rc) : "(no message)");
	if (rc)
		fprintf(out, "  auto    would fail: %s\n", line);
	else
		fprintf(out, "  auto    would use %s\n",
			strncmp(line, "monitor ", 8) ? line : line + 8);
	fprintf(out, "          (mrcache-info links libmrcache-hooks; in a program without it, "
		"auto takes neither uffd nor hooks)\n");
}

void info_monitors(FILE *out)
{
	static const enum mrcache_monitor_kind order[] = {
		MRCACHE_MONITOR_KERNEL, MRCACHE_MONITOR_BPF, MRCACHE_MONITOR_UFFD,
		MRCACHE_MONITOR_HOOKS, MRCACHE_MONITOR_NONE,
	};
	char said[1024];

	fprintf(out, "Monitors (auto tries kernel; bpf where the administrator set "
		"MRCACHE_AUTO_BPF=1; uffd with libmrcache-hooks linked; hooks):\n");
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		enum mrcache_monitor_kind kind = order[i];
		const char *name = mrcache_monitor_name(kind);
		int rc = info_capture(try_monitor, &kind, MRCACHE_LOG_DEBUG, said,
					   sizeof(said));

		if (rc == 0) {
			fprintf(out, "  %-7s yes%s%s\n", name, notes[kind] ? ": " : "",
				notes[kind] ? notes[kind] : "");
		} else {
			/* The code first: the library's reason may quote another
			 * errno (open's ENOENT behind the kernel monitor's ENODEV). */
			fprintf(out, "  %-7s no: mrcache_create gives -%s; %s\n", name,
				strerrorname_np(-rc) ? strerrorname_np(-rc) : strerror(-rc),
				reason(said, kind));
		}
	}
	info_auto(out);
}
