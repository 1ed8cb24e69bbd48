/* SPDX-License-Identifier: MIT */
/* log.c - the library's only output channel besides the stats. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "env.h"
#include "monitor.h"

/* MRCACHE_DEBUG, a boolean; a bad value reads as off here, and fails
 * mrcache_create() with a message (config.c). */
static int log_level(void)
{
	static int level = -1;
	const char *env;
	int on = 0;

	if (__atomic_load_n(&level, __ATOMIC_RELAXED) < 0) {
		env = getenv("MRCACHE_DEBUG");
		if (env)
			mrc_parse_bool(env, &on);
		__atomic_store_n(&level, on, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&level, __ATOMIC_RELAXED);
}

void mrc_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level())
		return;
	va_start(ap, fmt);
	fputs("mrcache: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
