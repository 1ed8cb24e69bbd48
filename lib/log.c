/* SPDX-License-Identifier: MIT */
/* log.c - the library's only output channel besides the stats. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "monitor.h"

static int log_level(void)
{
	static int level = -1;
	const char *env;

	if (__atomic_load_n(&level, __ATOMIC_RELAXED) < 0) {
		env = getenv("MRCACHE_DEBUG");
		__atomic_store_n(&level, env ? atoi(env) : 0, __ATOMIC_RELAXED);
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
