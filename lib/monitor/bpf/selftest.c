/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/selftest.c - before the bpf monitor is used, check on this
 * kernel that the operations it claims clear a watched word before they
 * return, and leave a watched neighbour alone.  A kernel whose functions
 * were renamed, inlined or changed meaning fails here instead of silently
 * missing invalidations; `auto` then falls back to the next monitor.
 */
#ifdef MRC_HAVE_BPF
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "monitor/bpf/bpf.h"

#define PG 4096ul

enum op { OP_MUNMAP, OP_DONTNEED, OP_MREMAP, OP_TRUNCATE };
static const char *const op_name[] = {
	"munmap", "madvise(MADV_DONTNEED)", "mremap", "ftruncate of a shared file mapping",
};

static int do_op(enum op op, char *p, int fd)
{
	void *to;

	switch (op) {
	case OP_MUNMAP:
		return munmap(p, PG);
	case OP_DONTNEED:
		return madvise(p, PG, MADV_DONTNEED);
	case OP_MREMAP:
		to = mmap(NULL, PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (to == MAP_FAILED)
			return -1;
		if (mremap(p, PG, PG, MREMAP_MAYMOVE | MREMAP_FIXED, to) == MAP_FAILED) {
			munmap(to, PG);
			return -1;
		}
		return munmap(to, PG);
	case OP_TRUNCATE:
		/* Drops the second page: the first one's watch must survive. */
		return ftruncate(fd, PG);
	}
	return -1;
}

static int valid(const struct mrc_watch *w)
{
	return __atomic_load_n(w->word, __ATOMIC_ACQUIRE) == w->expected;
}

/* Watch two pages, apply op to one, check both words.  0 or -errno, and
 * *why says what went wrong. */
static int run_case(struct mrc_bpf_mon *m, enum op op, const char **why)
{
	struct mrc_watch hit = { 0 }, spare = { 0 };
	char *p = MAP_FAILED, *victim, *other;
	int fd = -1, err;

	*why = "setup failed";
	if (op == OP_TRUNCATE) {
		fd = memfd_create("mrc-bpf-selftest", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, 2 * PG))
			goto sys_fail;
		p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED)
		goto sys_fail;
	memset(p, 1, 2 * PG);
	victim = op == OP_TRUNCATE ? p + PG : p;
	other = op == OP_TRUNCATE ? p : p + PG;
	err = mrc_bpf_watch(&m->base, (uintptr_t)victim, (uintptr_t)victim + PG, 0, &hit);
	if (!err)
		err = mrc_bpf_watch(&m->base, (uintptr_t)other, (uintptr_t)other + PG, 0, &spare);
	if (err) {
		*why = "watch failed";
		goto out;
	}
	if (do_op(op, victim, fd))
		goto sys_fail;
	err = -ENOTSUP;
	if (valid(&hit))
		*why = "the watched word was not cleared before the call returned";
	else if (!valid(&spare))
		*why = "the word of an untouched neighbour page was cleared";
	else
		err = 0;
	goto out;
sys_fail:
	err = -errno;
out:
	if (hit.word)
		mrc_bpf_unwatch(&m->base, &hit);
	if (spare.word)
		mrc_bpf_unwatch(&m->base, &spare);
	if (p != MAP_FAILED)
		munmap(p, 2 * PG);
	if (fd >= 0)
		close(fd);
	return err;
}

int mrc_bpf_selftest(struct mrc_bpf_mon *m)
{
	enum op op;
	const char *why;
	int err;

	for (op = OP_MUNMAP; op <= OP_TRUNCATE; op++) {
		err = run_case(m, op, &why);
		if (err) {
			mrc_log(0, "monitor bpf: self-test of the %s variant failed on %s: %s (%s)",
				mrc_bpf_variant_name(m->set->variant), op_name[op], why,
				strerror(-err));
			return -ENOTSUP;
		}
	}
	/* Its events name slots that are free again: routing drops them. */
	mrc_bpf_route(m->set);
	mrc_log(1, "monitor bpf: self-test passed (%s variant)",
		mrc_bpf_variant_name(m->set->variant));
	return 0;
}
#endif
