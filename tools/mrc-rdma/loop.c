/* SPDX-License-Identifier: MIT */
/* loop.c - a loopback pair of RC queue pairs on one verbs device. */
#ifdef MRC_HAVE_VERBS
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "loop.h"

#define LOOP_PSN	0x1234
#define LOOP_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static int qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		     const char *state)
{
	int ret = ibv_modify_qp(qp, attr, mask);

	if (ret)
		fprintf(stderr, "mrc-rdma: moving QP %u to %s: %s\n", qp->qp_num,
			state, strerror(ret));
	return -ret;
}

/* RESET -> INIT -> RTR -> RTS, connected to `peer` through our own GID. */
static int qp_connect(struct rdma_loop *l, struct ibv_qp *qp, uint32_t peer)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	ret = qp_modify(qp, &a, IBV_QP_STATE, "RESET");
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = l->port;
	a.pkey_index = 0;
	a.qp_access_flags = LOOP_ACCESS;
	ret = qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS, "INIT");
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = l->mtu;
	a.dest_qp_num = peer;
	a.rq_psn = LOOP_PSN;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = l->gid;
	a.ah_attr.grh.sgid_index = (uint8_t)l->gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = l->port;
	ret = qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, "RTR");
	if (ret)
		return ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = LOOP_PSN;
	a.max_rd_atomic = 1;
	return qp_modify(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			 IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
			 "RTS");
}

static int loop_connect(struct rdma_loop *l)
{
	int ret = qp_connect(l, l->qp[0], l->qp[1]->qp_num);

	return ret ? ret : qp_connect(l, l->qp[1], l->qp[0]->qp_num);
}

static struct ibv_context *open_named(const char *dev, char *name, size_t size)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n = 0;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n && !ctx; i++) {
		if (dev && strcmp(ibv_get_device_name(list[i]), dev) != 0)
			continue;
		ctx = ibv_open_device(list[i]);
		if (ctx)
			snprintf(name, size, "%s", ibv_get_device_name(list[i]));
	}
	ibv_free_device_list(list);
	return ctx;
}

/*
 * The GID to loop through: RoCE resolves it to an IP route, and on `lo` only
 * the addresses (::ffff:127.0.0.1, ::1) have one; the link-local default
 * GID at index 0 gives ENETUNREACH.  Look at the first few entries only:
 * the table has 1024 and each is a sysfs read.
 */
static int pick_gid(struct rdma_loop *l, int len)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid gid;
	int fallback = -1;

	for (int i = 0; i < len && i < 16; i++) {
		if (ibv_query_gid(l->ctx, l->port, i, &gid))
			break;
		if (!gid.global.subnet_prefix && !gid.global.interface_id)
			continue;
		if (!memcmp(gid.raw, v4mapped, sizeof(v4mapped)))
			return i;
		if (fallback < 0 && gid.raw[0] != 0xfe)
			fallback = i;
	}
	return fallback;
}

int rdma_loop_open(struct rdma_loop *l, const char *dev, int gid_index)
{
	struct ibv_qp_init_attr qa;
	struct ibv_port_attr pa;
	int ret;

	memset(l, 0, sizeof(*l));
	l->port = 1;
	l->gid_index = gid_index;
	l->ctx = open_named(dev, l->name, sizeof(l->name));
	if (!l->ctx) {
		fprintf(stderr, "mrc-rdma: no RDMA device%s%s (for Soft-RoCE: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev lo)\n",
			dev ? " named " : "", dev ? dev : "");
		return -ENODEV;
	}
	ret = ibv_query_port(l->ctx, l->port, &pa);
	if (ret || pa.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, "mrc-rdma: %s port %u is not active\n", l->name, l->port);
		rdma_loop_close(l);
		return -ENODEV;
	}
	l->mtu = pa.active_mtu;
	l->gid_index = gid_index >= 0 ? gid_index : pick_gid(l, pa.gid_tbl_len);
	if (l->gid_index < 0 || ibv_query_gid(l->ctx, l->port, l->gid_index, &l->gid)) {
		fprintf(stderr, "mrc-rdma: %s has no usable GID %d\n", l->name, gid_index);
		rdma_loop_close(l);
		return -ENODEV;
	}
	l->pd = ibv_alloc_pd(l->ctx);
	l->channel = l->pd ? ibv_create_comp_channel(l->ctx) : NULL;
	l->cq = l->channel ? ibv_create_cq(l->ctx, 16, NULL, l->channel, 0) : NULL;
	if (!l->cq) {
		fprintf(stderr, "mrc-rdma: %s: cannot allocate a PD, a channel and a CQ\n",
			l->name);
		rdma_loop_close(l);
		return -ENOMEM;
	}
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = l->cq;
	qa.recv_cq = l->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 4;
	qa.cap.max_recv_wr = 4;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	for (int i = 0; i < 2; i++) {
		l->qp[i] = ibv_create_qp(l->pd, &qa);
		if (!l->qp[i]) {
			fprintf(stderr, "mrc-rdma: %s: cannot create an RC QP: %s\n",
				l->name, strerror(errno));
			rdma_loop_close(l);
			return -ENOMEM;
		}
	}
	ret = loop_connect(l);
	if (ret)
		rdma_loop_close(l);
	return ret;
}

void rdma_loop_close(struct rdma_loop *l)
{
	for (int i = 0; i < 2; i++)
		if (l->qp[i])
			ibv_destroy_qp(l->qp[i]);
	if (l->cq)
		ibv_destroy_cq(l->cq);
	if (l->channel)
		ibv_destroy_comp_channel(l->channel);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
	if (l->ctx)
		ibv_close_device(l->ctx);
	memset(l, 0, sizeof(*l));
}

/* Sleep until one completion arrives: arm, re-poll (it may have come
 * before arming), block on the channel. */
static int wait_one(struct rdma_loop *l, struct ibv_wc *wc)
{
	struct ibv_cq *cq;
	void *ctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(l->cq, 1, wc);
		if (n)
			return n;
		if (ibv_req_notify_cq(l->cq, 0))
			return -1;
		n = ibv_poll_cq(l->cq, 1, wc);
		if (n)
			return n;
		if (ibv_get_cq_event(l->channel, &cq, &ctx))
			return -1;
		ibv_ack_cq_events(cq, 1);
	}
}

int rdma_loop_xfer(struct rdma_loop *l, enum ibv_wr_opcode op, void *local,
		   uint32_t lkey, uint64_t remote, uint32_t rkey, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local, .length = (uint32_t)len, .lkey = lkey,
	};
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int n, ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = remote;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = remote;
	wr.wr.rdma.rkey = rkey;
	ret = ibv_post_send(l->qp[0], &wr, &bad);
	if (ret) {
		fprintf(stderr, "mrc-rdma: ibv_post_send: %s\n", strerror(ret));
		return -ret;
	}
	n = wait_one(l, &wc);
	if (n < 0) {
		fprintf(stderr, "mrc-rdma: ibv_poll_cq failed\n");
		return -EIO;
	}
	if (wc.status == IBV_WC_SUCCESS)
		return 0;
	l->errors++;
	fprintf(stderr, "mrc-rdma: %s of %zu bytes to %#lx rkey %#x: %s\n",
		op == IBV_WR_RDMA_READ ? "RDMA READ" : "RDMA WRITE", len,
		(unsigned long)remote, rkey, ibv_wc_status_str(wc.status));
	/* An error moved both QPs to the error state: drain, reconnect. */
	while (ibv_poll_cq(l->cq, 1, &wc) > 0)
		;
	ret = loop_connect(l);
	return ret ? ret : -EIO;
}
#endif
