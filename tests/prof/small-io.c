/* SPDX-License-Identifier: MIT */
/*
 * small-io.c - for verdict.sh: a program whose I/O is all small (1,000
 * writes of 4 KiB, below the 16 KiB buffer threshold) plus a little heap
 * activity: nothing for a registration cache to cache.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	static char block[4096];
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	memset(block, 'x', sizeof(block));
	for (int i = 0; i < 1000; i++) {
		char *p = malloc(200000);

		if (!p || write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return 1;
		free(p);
	}
	close(fd);
	return 0;
}
