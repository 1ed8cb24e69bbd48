/* SPDX-License-Identifier: MIT */
/* version.c - the version of the library running, as opposed to the one a
 * program was compiled against (MRCACHE_VERSION). */
#include "mrcache.h"

const char *mrcache_version(void)
{
	return MRCACHE_VERSION;
}
