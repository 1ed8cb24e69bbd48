/* SPDX-License-Identifier: MIT */
/*
 * log.c - the library's only output channel besides the stats: stderr,
 * or the program's function (mrcache_set_log()).
 *
 * The level delivered is MRCACHE_LOG_LEVEL's when it is set, else
 * MRCACHE_DEBUG's (true: 1), else the program's (0 until it calls
 * mrcache_set_log()): the environment overrides the program, as it does
 * for struct mrcache_config.  The variables are read once, at the first
 * message; a bad value reads as unset here and fails mrcache_create() with
 * a message (config.c).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/env.h"
#include "common/log.h"
#include "monitor/monitor.h"

#define LEVEL_UNREAD (-2)
#define LEVEL_UNSET (-1)

/* sink_lock guards sink_fn and sink_arg, which change together; held to
 * copy them, never while sink_fn runs. */
static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static mrcache_log_fn sink_fn;
static void *sink_arg;
static int program_level;		/* atomic */
static int env_level = LEVEL_UNREAD;	/* atomic */
static __thread int quiet;		/* see mrc_log_quiet() */
static __thread const char *cache_name;	/* see mrc_log_name() */
static __thread char *keep_buf;		/* see mrc_log_keep() */
static __thread size_t keep_len;

static int read_env_level(void)
{
	const char *v = getenv("MRCACHE_LOG_LEVEL");
	int level;

	if (v && !mrc_parse_log_level(v, &level))
		return level;
	v = getenv("MRCACHE_DEBUG");
	if (v && !mrc_parse_bool(v, &level))
		return level ? MRCACHE_LOG_DEBUG : MRCACHE_LOG_ERROR;
	return LEVEL_UNSET;
}

static int log_level(void)
{
	int level = __atomic_load_n(&env_level, __ATOMIC_RELAXED);

	if (level == LEVEL_UNREAD) {
		level = read_env_level();
		__atomic_store_n(&env_level, level, __ATOMIC_RELAXED);
	}
	return level == LEVEL_UNSET ? __atomic_load_n(&program_level, __ATOMIC_RELAXED) : level;
}

int mrcache_set_log(mrcache_log_fn fn, void *arg, int level)
{
	if (level < MRCACHE_LOG_ERROR || level > MRCACHE_LOG_TRACE)
		return -EINVAL;
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_arg = arg;
	pthread_mutex_unlock(&sink_lock);
	__atomic_store_n(&program_level, level, __ATOMIC_RELAXED);
	return 0;
}

void mrc_log_quiet(int on)
{
	quiet = on;
}

void mrc_log_keep(char *buf, size_t len)
{
	keep_buf = buf;
	keep_len = len;
	if (buf && len)
		buf[0] = 0;
}

const char *mrc_log_name(const char *name)
{
	const char *old = cache_name;

	cache_name = name;
	return old;
}

/* The program's function gets the message whole: formatted on the stack,
 * or on the heap when it is longer (a verifier log). */
static void deliver(mrcache_log_fn fn, void *arg, int level, const char *name,
		    const char *fmt, va_list ap)
{
	char buf[1024], *msg = buf;
	va_list again;
	int n, pre = name ? snprintf(buf, sizeof(buf), "%s: ", name) : 0;

	va_copy(again, ap);
	n = vsnprintf(buf + pre, sizeof(buf) - (size_t)pre, fmt, ap);
	if (n >= 0 && n + pre >= (int)sizeof(buf)) {
		msg = malloc((size_t)(n + pre) + 1);
		if (msg) {
			memcpy(msg, buf, (size_t)pre);
			vsnprintf(msg + pre, (size_t)n + 1, fmt, again);
		} else {
			msg = buf;
		}
	}
	va_end(again);
	if (n >= 0)
		fn(arg, level, msg);
	if (msg != buf)
		free(msg);
}

void mrc_log(int level, const char *fmt, ...)
{
	mrcache_log_fn fn;
	void *arg;
	va_list ap;

	if (level == MRCACHE_LOG_ERROR && quiet)
		level = MRCACHE_LOG_DEBUG;
	if (keep_buf && keep_len && !keep_buf[0] && level <= MRCACHE_LOG_DEBUG) {
		va_start(ap, fmt);
		vsnprintf(keep_buf, keep_len, fmt, ap);
		va_end(ap);
	}
	if (level > log_level())
		return;
	pthread_mutex_lock(&sink_lock);
	fn = sink_fn;
	arg = sink_arg;
	pthread_mutex_unlock(&sink_lock);
	va_start(ap, fmt);
	if (fn) {
		deliver(fn, arg, level, cache_name, fmt, ap);
	} else {
		flockfile(stderr);	/* one line, even among threads */
		fputs("mrcache: ", stderr);
		if (cache_name)
			fprintf(stderr, "%s: ", cache_name);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		funlockfile(stderr);
	}
	va_end(ap);
}
