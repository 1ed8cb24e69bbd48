/* SPDX-License-Identifier: MIT */
/*
 * loop.h - a loopback pair of RC queue pairs on one verbs device.
 *
 * qp[0] is the initiator, qp[1] its peer: an RDMA WRITE posted on qp[0]
 * lands in memory registered on the same PD, addressed by (address, rkey),
 * exactly as it would on a remote node.  One work request at a time,
 * signalled, waited for on a completion channel: the tool measures and
 * checks, it does not stream, and a process spinning on the CQ would take
 * the CPU from Soft-RoCE, which completes the request in the kernel.
 */
#ifndef MRC_RDMA_LOOP_H
#define MRC_RDMA_LOOP_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct rdma_loop {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *channel;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	char name[64];
	uint64_t errors;	/* completions with an error status */
};

/* Open device `dev` (NULL: the first one) and connect the pair through
 * GID `gid_index` (-1: the first with an IP route).  -ENODEV (and a
 * message) when there is no device. */
int rdma_loop_open(struct rdma_loop *l, const char *dev, int gid_index);
void rdma_loop_close(struct rdma_loop *l);

/* Post one IBV_WR_RDMA_WRITE or IBV_WR_RDMA_READ on qp[0] between the
 * local [local, local+len) under lkey and the peer's (remote, rkey), and
 * wait for its completion.  0, or -EIO after an error completion (the
 * pair is then reconnected so the next transfer can run). */
int rdma_loop_xfer(struct rdma_loop *l, enum ibv_wr_opcode op, void *local,
		   uint32_t lkey, uint64_t remote, uint32_t rkey, size_t len);

#endif
