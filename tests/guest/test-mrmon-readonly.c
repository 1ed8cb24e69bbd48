/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-readonly: no way of making the shared map writable works.
 *   mmap PROT_WRITE, shared or private           EPERM (the module)
 *   mprotect(PROT_WRITE) of a shared or a private
 *   read-only map                                EACCES (VM_MAYWRITE off)
 *   write through /proc/self/mem (FOLL_FORCE,
 *   which writes a private read-only page by COW) EIO (nothing written)
 *   mremap growing the map                       EFAULT (VM_DONTEXPAND)
 * and the word watched stays what the module wrote.  Controls: a
 * read-only shared memfd map can be mprotect()ed writable, and a private
 * read-only anonymous page can be written through /proc/self/mem, so each
 * refusal above is the module's flags and not the method failing.
 */
#include <sys/syscall.h>
#include "mrmon_test.h"

static int write_mem(int memfd, void *addr, uint64_t v)
{
	ssize_t n = pwrite(memfd, &v, sizeof(v), (off_t)(uintptr_t)addr);

	if (n < 0)
		return -errno;
	return n == sizeof(v) ? 0 : -EIO;
}

int main(void)
{
	struct mon m;
	uint32_t slot = 0;
	uint64_t expected = 0;
	char *buf, *priv, *anon;
	void *q;
	int memfd, mfd;

	CHECK_EQ(mon_open(&m, 16, 16), 0);
	buf = mon_map_anon(PAGE);
	CHECK_EQ(mon_watch(&m, buf, PAGE, 1, &slot, &expected), 0);
	memfd = open("/proc/self/mem", O_RDWR);
	CHECK(memfd >= 0);

	CHECK(mmap(NULL, m.map_size, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0) == MAP_FAILED &&
	      errno == EPERM);
	CHECK(mmap(NULL, m.map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, m.fd, 0) == MAP_FAILED &&
	      errno == EPERM);
	CHECK(mprotect(m.map, m.map_size, PROT_READ | PROT_WRITE) < 0 && errno == EACCES);
	CHECK_EQ(write_mem(memfd, (char *)m.map + PAGE + slot * 8, 0), -EIO);
	q = mremap(m.map, m.map_size, m.map_size + PAGE, MREMAP_MAYMOVE);
	CHECK(q == MAP_FAILED && errno == EFAULT);

	priv = mmap(NULL, m.map_size, PROT_READ, MAP_PRIVATE, m.fd, 0);
	CHECK(priv != MAP_FAILED);
	if (priv != MAP_FAILED) {
		CHECK(mprotect(priv, m.map_size, PROT_READ | PROT_WRITE) < 0 && errno == EACCES);
		CHECK_EQ(write_mem(memfd, priv + PAGE + slot * 8, 0), -EIO);
		CHECK_EQ(((const uint64_t *)(priv + PAGE))[slot], expected);
		munmap(priv, m.map_size);
	}
	CHECK(mon_valid(&m, slot, expected));
	CHECK_EQ(m.hdr->nslots, 16);

	/* Controls. */
	mfd = (int)syscall(SYS_memfd_create, "ctl", 0);
	CHECK(mfd >= 0 && ftruncate(mfd, PAGE) == 0);
	q = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, mfd, 0);
	CHECK(q != MAP_FAILED && mprotect(q, PAGE, PROT_READ | PROT_WRITE) == 0);
	anon = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK_EQ(write_mem(memfd, anon, 42), 0);
	CHECK_EQ(*(uint64_t *)anon, 42);
	printf("map refused PROT_WRITE (EPERM), mprotect (EACCES), /proc/self/mem (EIO), "
	       "growth (EFAULT); controls writable\n");
	mon_close(&m);
	return test_result();
}
