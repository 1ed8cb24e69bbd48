/* SPDX-License-Identifier: MIT */
/*
 * test-mrmon-vmsplice: finding 6 of issue 24 stays fixed: the word map
 * cannot be referenced through GUP-fast.  As uid 65534 with default
 * limits, vmsplice() of the word page (and of the header page) into a pipe
 * must fail (EFAULT): the map is VM_PFNMAP with special PTEs, so GUP-fast
 * finds no page.  On 1dca6a6 (VM_IO only, pages inserted as normal PTEs)
 * it succeeded on 6.1 and took a reference.  Control: vmsplice() of an
 * ordinary page succeeds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/uio.h>
#include "mrmon_priv.h"
#include "mrmon_test.h"

static int splice_page(int fd, const void *p)
{
	struct iovec iov = { (void *)p, PAGE };

	return vmsplice(fd, &iov, 1, 0) < 0 ? -errno : 0;
}

static int child(void *arg)
{
	char *plain = mon_map_anon(PAGE);
	struct mon m;
	int pfd[2];
	uint32_t slot = 0;
	uint64_t e = 0;

	CHECK_EQ(mon_open(&m, 16, 16), 0);
	CHECK_EQ(pipe2(pfd, O_NONBLOCK), 0);
	CHECK_EQ(mon_watch(&m, plain, PAGE, 0, &slot, &e), 0);
	CHECK(mon_valid(&m, slot, e));		/* both pages faulted in */
	CHECK(m.hdr->nslots == 16);
	printf("vmsplice of the word page: %s; of the header page: %s; of a plain page: %s\n",
	       strerror(-splice_page(pfd[1], m.words)), strerror(-splice_page(pfd[1], m.map)),
	       strerror(-splice_page(pfd[1], plain)));
	CHECK_EQ(splice_page(pfd[1], m.words), -EFAULT);
	CHECK_EQ(splice_page(pfd[1], m.map), -EFAULT);
	CHECK_EQ(splice_page(pfd[1], plain), 0);		/* control */
	CHECK_EQ(mon_unwatch(&m, slot, e), 0);
	mon_close(&m);
	return test_result();
}

int main(void)
{
	if (access("/dev/mrmon", F_OK))
		SKIP("/dev/mrmon missing");
	CHECK_EQ(mon_run_as_nobody(child, NULL), 0);
	return test_result();
}
