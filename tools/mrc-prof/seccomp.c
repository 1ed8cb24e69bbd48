/* SPDX-License-Identifier: MIT */
/*
 * seccomp.c - a classic-BPF filter returning SECCOMP_RET_TRACE for the VM
 * syscalls (and large I/O) and SECCOMP_RET_ALLOW for the rest.  Only
 * x86-64 syscalls are traced; x32 and i386 calls pass untraced.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "seccomp.h"
#include "trace.h"

static const long vm_nrs[] = {
	SYS_mmap, SYS_munmap, SYS_mremap, SYS_madvise, SYS_brk, SYS_shmat, SYS_shmdt,
};
/* Calls whose third argument is the buffer length. */
static const long io_nrs[] = {
	SYS_read, SYS_pread64, SYS_recvfrom, SYS_write, SYS_pwrite64, SYS_sendto,
};

/* io_uring: the ring's set-up (where its submission queue lives) and
 * every submission, whose queue entries the tracer reads (tracer.c). */
static const long uring_nrs[] = { SYS_io_uring_setup, SYS_io_uring_enter };

#define NVM (int)(sizeof(vm_nrs) / sizeof(vm_nrs[0]))
#define NIO (int)(sizeof(io_nrs) / sizeof(io_nrs[0]))
#define NURING (int)(sizeof(uring_nrs) / sizeof(uring_nrs[0]))

int mp_seccomp_kind(long nr)
{
	static const int vm_kinds[NVM] = {
		MP_MMAP, MP_MUNMAP, MP_MREMAP, MP_MADVISE, MP_BRK, MP_SHMAT, MP_SHMDT,
	};

	for (int i = 0; i < NVM; i++)
		if (vm_nrs[i] == nr)
			return vm_kinds[i];
	for (int i = 0; i < NIO; i++)
		if (io_nrs[i] == nr)
			return i < NIO / 2 ? MP_IO_READ : MP_IO_WRITE;
	if (nr == SYS_io_uring_setup)
		return MP_SECCOMP_URING_SETUP;
	if (nr == SYS_io_uring_enter)
		return MP_SECCOMP_URING_ENTER;
	return -1;
}

#define ARG2_LO (offsetof(struct seccomp_data, args) + 2 * sizeof(__u64))
#define ARG2_HI (ARG2_LO + sizeof(__u32))

int mp_seccomp_install(uint32_t buffer_min)
{
	struct sock_filter f[4 + NVM + NURING + NIO + 7];
	int nio = buffer_min ? NIO : 0, nuring = buffer_min ? NURING : 0, n = 0;
	/* Layout: header, one test per syscall, ALLOW for the rest, the
	 * length check, ALLOW, TRACE.  Classic BPF jumps only forward. */
	int check = 4 + NVM + nuring + nio + 1, allow = check + 4, trace = allow + 1;
	struct sock_fprog prog;

#define JUMP(target) ((__u8)((target) - (n + 1)))
	f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, arch)); n++;
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64,
					    0, JUMP(allow)); n++;
	f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, nr)); n++;
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u,
					    JUMP(allow), 0); n++;
	for (int i = 0; i < NVM; i++, n++)
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						    (__u32)vm_nrs[i], JUMP(trace), 0);
	for (int i = 0; i < nuring; i++, n++)
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						    (__u32)uring_nrs[i], JUMP(trace), 0);
	for (int i = 0; i < nio; i++, n++)
		f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						    (__u32)io_nrs[i], JUMP(check), 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2_HI); n++;
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, JUMP(trace)); n++;
	f[n] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG2_LO); n++;
	f[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, buffer_min,
					    JUMP(trace), JUMP(allow)); n++;
	f[n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW); n++;
	f[n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE); n++;
#undef JUMP
	prog.len = (unsigned short)n;
	prog.filter = f;
	/* Without CAP_SYS_ADMIN a filter needs no_new_privs; root keeps
	 * setuid programs working as they would untraced. */
	if (geteuid() != 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}
