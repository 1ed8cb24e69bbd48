/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/set.c - one program set per process, shared by every cache
 * that uses the bpf monitor.
 *
 * The programs filter on the process's mm, not on a cache, so a second
 * set would only make every unmap (and, for the syscall variant, every
 * system call of every process) run the filter twice, and each create pay
 * the load again (75-150 ms).  The first cache's start loads and
 * self-tests the set; later ones take a reference (microseconds); the last
 * cache's stop detaches and closes it.  Slots belong to the cache that
 * watches them, and drain() hands each event to its owner
 * (monitor/bpf/bpf.c).
 *
 * fork: the child inherits the descriptors of the links, programs and
 * maps, and a link stays attached while any process holds it: every
 * system call of every process would keep paying the filter for as long
 * as a forked worker lives, after the parent's mrcache_destroy().  The
 * child cannot use the parent's caches (-ECHILD), so the atfork child
 * handler closes the set's descriptors and mappings there (set_lock is
 * held across fork, so the child never sees the set half made).  That
 * path makes only system calls: no libbpf, whose libc does not know about
 * the fork.  A cache the child creates loads a set of its own.
 */
#ifdef MRC_HAVE_BPF
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "monitor/bpf/bpf.h"

/* set_lock guards the_set and its refs; held while the set loads. */
static pthread_mutex_t set_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mrc_bpf_set *the_set;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

void *mrc_bpf_pages_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void mrc_bpf_pages_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

static void fork_prepare(void)
{
	pthread_mutex_lock(&set_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&set_lock);
}

/* The parent's monitors keep pointing at the set's memory, which the
 * child leaves alone (mrcache_destroy() in a child stops no monitor). */
static void fork_child(void)
{
	if (the_set)
		mrc_bpf_unload(the_set);
	the_set = NULL;
	pthread_mutex_unlock(&set_lock);
}

static void atfork_install(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void set_free(struct mrc_bpf_set *s)
{
	mrc_bpf_unload(s);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->ring_lock);
	mrc_bpf_pages_free(s->watches, MRC_BPF_SLOTS * sizeof(*s->watches));
	mrc_bpf_pages_free(s->free_ids, MRC_BPF_SLOTS * sizeof(*s->free_ids));
	free(s);
}

static struct mrc_bpf_set *set_new(void)
{
	struct mrc_bpf_set *s = calloc(1, sizeof(*s));
	int *fds[] = { &s->watch_fd, &s->words_fd, &s->slots_fd, &s->cells_fd,
		       &s->events_fd, &s->bss_fd };

	if (!s)
		return NULL;
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		*fds[i] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->ring_lock, NULL);
	s->mons.next = s->mons.prev = &s->mons;
	s->watches = mrc_bpf_pages_alloc(MRC_BPF_SLOTS * sizeof(*s->watches));
	s->free_ids = mrc_bpf_pages_alloc(MRC_BPF_SLOTS * sizeof(*s->free_ids));
	if (!s->watches || !s->free_ids) {
		set_free(s);
		return NULL;
	}
	/* Hand out low ids first: the programs' slot walk stops at nslots. */
	for (uint32_t id = MRC_BPF_SLOTS - 1; id > MRC_BPF_EPOCH_SLOT; id--)
		s->free_ids[s->nfree++] = id;
	return s;
}

/* Load the set and check it with a monitor of no cache of its own. */
static int set_load(struct mrc_bpf_set **out)
{
	struct mrc_bpf_set *s = set_new();
	struct mrc_bpf_mon probe = { .set = s };
	int err;

	if (!s)
		return -ENOMEM;
	err = mrc_bpf_load(s);
	if (!err)
		err = mrc_bpf_selftest(&probe);
	if (err) {
		set_free(s);
		return err;
	}
	*out = s;
	return 0;
}

int mrc_bpf_set_get(struct mrc_bpf_set **out)
{
	int err = 0;

	pthread_once(&atfork_once, atfork_install);
	pthread_mutex_lock(&set_lock);
	if (!the_set)
		err = set_load(&the_set);
	if (!err) {
		the_set->refs++;
		*out = the_set;
	}
	pthread_mutex_unlock(&set_lock);
	return err;
}

void mrc_bpf_set_put(struct mrc_bpf_set *s)
{
	pthread_mutex_lock(&set_lock);
	if (s == the_set && --s->refs == 0) {
		the_set = NULL;
		set_free(s);
	}
	pthread_mutex_unlock(&set_lock);
}
#endif
