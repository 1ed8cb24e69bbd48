/* SPDX-License-Identifier: MIT */
/*
 * lib/monitor/bpf/ring.c - the consumer side of a BPF_MAP_TYPE_RINGBUF map,
 * read from its mappings with no system call and no libbpf (the monitor
 * drains it on cache calls; libbpf is only for loading, lib/monitor/bpf/dl_bpf.h).
 *
 * The kernel's layout: page 0 holds the consumer position (ours to
 * write), page 1 the producer position, then the data area mapped twice
 * in a row so that a record never wraps.  Each record starts with an
 * 8-byte header whose first word is its length, with BUSY set while the
 * producer fills it and DISCARD if it gave it up; records are 8-aligned.
 */
#ifdef MRC_HAVE_BPF
#include <errno.h>
#include <linux/bpf.h>
#include <sys/mman.h>
#include <unistd.h>
#include "monitor/bpf/bpf.h"

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

int mrc_bpf_ring_map(struct mrc_bpf_ring *r, int map_fd, size_t size)
{
	size_t pg = page_size();
	void *c, *p;

	c = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	p = mmap(NULL, pg + 2 * size, PROT_READ, MAP_SHARED, map_fd, (off_t)pg);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(c, pg);
		return err;
	}
	r->consumer_pos = c;
	r->producer_pos = p;
	r->data = (const unsigned char *)p + pg;
	r->size = size;
	return 0;
}

void mrc_bpf_ring_unmap(struct mrc_bpf_ring *r)
{
	size_t pg = page_size();

	if (r->consumer_pos)
		munmap(r->consumer_pos, pg);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, pg + 2 * r->size);
	r->consumer_pos = NULL;
	r->producer_pos = NULL;
	r->data = NULL;
}

int mrc_bpf_ring_consume(struct mrc_bpf_ring *r,
			 void (*fn)(void *arg, const void *data, size_t len), void *arg)
{
	unsigned long cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	unsigned long prod;
	int n = 0;

	while (cons < (prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE))) {
		while (cons < prod) {
			const uint32_t *hdr = (const uint32_t *)(r->data + (cons & (r->size - 1)));
			uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

			if (len & BPF_RINGBUF_BUSY_BIT)
				return n;
			cons += (((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ) + 7) & ~7ul;
			if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
				fn(arg, (const unsigned char *)hdr + BPF_RINGBUF_HDR_SZ, len);
				n++;
			}
			__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
		}
	}
	return n;
}
#endif
