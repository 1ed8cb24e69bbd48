/* SPDX-License-Identifier: MIT */
/* A shared object for test-bpf-dlclose: dlclose() makes the dynamic
 * loader munmap this buffer (libmrc-bpf-dlclose.so, built by mk/bpf.mk). */
char mrc_dl_buffer[64 * 1024] __attribute__((aligned(4096)));
