/* SPDX-License-Identifier: MIT */
/*
 * vm-workload - a program with a known VM activity for mrc-prof's tests:
 * every kind of traced call from named functions, in the main thread, in
 * a second thread and in a forked child, plus large I/O into a buffer
 * that is then unmapped (one invalidation for the simulated cache).
 *
 * Per named function (what the tests look for, by call site):
 *   workload_mmaps      40 mmap + 40 munmap (main), 25 + 25 (thread),
 *                       10 + 10 (child): one function, three callers
 *   workload_mremap     5 mremap
 *   workload_madvise    7 madvise(MADV_DONTNEED)
 *   workload_shm        2 shmat + 2 shmdt
 *   workload_io         64 KiB buffer: 4 reads + 4 writes, munmap, a new
 *                       mapping at the same address, 1 read, munmap
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEN (64 * 1024)

static inline __attribute__((always_inline)) void *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

__attribute__((noinline)) static void workload_mmaps(int n)
{
	for (int i = 0; i < n; i++) {
		char *p = map(LEN);

		p[0] = 1;
		munmap(p, LEN);
	}
}

__attribute__((noinline)) static void workload_mremap(void)
{
	char *p = map(LEN);

	for (int i = 0; i < 5; i++) {
		p = mremap(p, LEN * (size_t)(i + 1), LEN * (size_t)(i + 2), MREMAP_MAYMOVE);
		if (p == MAP_FAILED) {
			perror("mremap");
			exit(1);
		}
	}
	munmap(p, LEN * 6);
}

__attribute__((noinline)) static void workload_madvise(void)
{
	char *p = map(LEN);

	for (int i = 0; i < 7; i++) {
		p[i] = 1;
		madvise(p, LEN, MADV_DONTNEED);
	}
	munmap(p, LEN);
}

__attribute__((noinline)) static void workload_shm(void)
{
	int id = shmget(IPC_PRIVATE, LEN, IPC_CREAT | 0600);

	if (id < 0) {
		perror("shmget");
		exit(1);
	}
	for (int i = 0; i < 2; i++) {
		char *p = shmat(id, NULL, 0);

		if (p == (void *)-1) {
			perror("shmat");
			exit(1);
		}
		p[0] = 1;
		shmdt(p);
	}
	shmctl(id, IPC_RMID, NULL);
}

__attribute__((noinline)) static void workload_io(void)
{
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
	char *p = map(LEN);

	for (int i = 0; i < 4; i++) {
		if (read(in, p, LEN) != LEN || write(out, p, LEN) != LEN) {
			perror("io");
			exit(1);
		}
	}
	munmap(p, LEN);
	/* New memory at the same address: a cache that missed the munmap
	 * would hand out the old registration (a stale hit). */
	if (mmap(p, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		 MAP_FIXED_NOREPLACE, -1, 0) != p || read(in, p, LEN) != LEN) {
		perror("remap");
		exit(1);
	}
	munmap(p, LEN);
	close(in);
	close(out);
}

static void *thread_main(void *arg)
{
	workload_mmaps(25);
	return arg;
}

int main(void)
{
	pthread_t th;
	pid_t child;
	int status;

	if (pthread_create(&th, NULL, thread_main, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	workload_mmaps(40);
	pthread_join(th, NULL);
	workload_mremap();
	workload_madvise();
	workload_shm();
	workload_io();
	child = fork();
	if (child == 0) {
		workload_mmaps(10);
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || status)
		return 1;
	return 0;
}
