/* SPDX-License-Identifier: MIT */
/*
 * witness_abi.c - everything in libmrc-audit that depends on the exact
 * /dev/mrmon ABI version, in one place so that a new ABI is a change here.
 *
 * What the rest of the library relies on holds in ABI 2 and ABI 3: a word
 * equals the `expected` WATCH returned while the range is intact, and is
 * read with one load.  The library never REVALIDATEs (ABI 3 dropped it): a
 * harmless CLEAR (a VMA or huge-page split) stays an invalidation
 * (docs/audit.md, "What it cannot see").
 *
 * ABI 3 (built against now; the module refuses an ABI-2 handshake):
 *   - the handshake's version;
 *   - a WATCH entry may come back "not armed" (an invalidation of the range
 *     was in flight): mra_abi_armed() says so and the caller treats the
 *     registration as invalid at once;
 *   - the kernel removes a watch itself when it clears the word, so UNWATCH
 *     of it gives -ESTALE: mra_abi_unwatch_gone() accepts that.
 *
 * Assumed unchanged, and used by witness.c as the uapi header defines
 * them: HANDSHAKE's limits and header_size, SETUP, the batch structs, the
 * map (struct mrmon_header's `pending`, the words at header_size) and
 * struct mrmon_event with its causes.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include "audit.h"

int mra_abi_handshake(int fd, struct mrmon_handshake *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->abi_version = MRMON_ABI_VERSION;
	return ioctl(fd, MRMON_IOC_HANDSHAKE, hs) ? -errno : 0;
}

/* No MRMON_RANGE_SNAPSHOT: it serves only REVALIDATE. */
uint32_t mra_abi_watch_flags(void)
{
	return 0;
}

/* An entry that overlapped an invalidation in flight comes back with
 * expected 0: not armed. */
bool mra_abi_armed(const struct mrmon_range *r)
{
	return r->expected & MRMON_WORD_VALID;
}

bool mra_abi_unwatch_gone(int err)
{
	return err == ESTALE;
}
