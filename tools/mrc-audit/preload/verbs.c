/* SPDX-License-Identifier: MIT */
/*
 * verbs.c - what libmrc-audit interposes in libibverbs (rdma-core 44, the
 * version Debian 12 ships; docs/audit.md "How it interposes").
 *
 * Registrations: ibv_reg_mr, ibv_reg_mr_iova, ibv_reg_mr_iova2,
 * ibv_rereg_mr, ibv_dereg_mr and ibv_reg_dmabuf_mr are exported functions
 * (verbs.h's ibv_reg_mr() macro inlines a choice between ibv_reg_mr and
 * ibv_reg_mr_iova2), so LD_PRELOAD definitions take every call made
 * through the PLT, from the program or from a library it dlopens.  The
 * real ones come from dlvsym(RTLD_NEXT) at the versions verbs.h binds to.
 * A call made from inside another interposed call (libibverbs calling its
 * own exported function) passes through unrecorded.
 *
 * Posts: ibv_post_send, ibv_post_recv and ibv_post_srq_recv are static
 * inline functions in verbs.h that call qp->context->ops.post_send (and
 * .post_recv, .post_srq_recv): no symbol to interpose.  rdma-core's
 * verbs_set_ops() copies the provider's post functions into that table,
 * which lives in the provider's writable context, and libibverbs never
 * calls them itself.  So the library wraps ibv_open_device: after the real
 * one returns, it saves the context's three pointers and replaces them
 * with checkers that look at every SGE and then call the saved function.
 * The context is not yet visible to any other thread at that point.
 *
 * The extended QP API (ibv_wr_set_sge, ibv_wr_set_sge_list: inline, through
 * per-QP pointers in struct ibv_qp_ex that the provider sets when the QP
 * is created, different per QP type in mlx5): the same open wraps the
 * verbs context's create_qp_ex (where the inline ibv_create_qp_ex goes,
 * rdma_create_qp included), and a QP created with send ops gets its two
 * SGE setters replaced; the saved ones are found by the ibv_qp_ex pointer
 * in a lock-free table.
 *
 * Not wrapped (docs/audit.md): ibv_post_wq_recv (per-WQ), contexts made
 * by ibv_import_device, and a provider's direct verbs (mlx5dv).  Their
 * uses are not checked.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <infiniband/verbs.h>
#include "audit.h"

#define MRA_CTX_MAX 64

#define MRA_QPX_SLOTS 4096	/* QPs with send ops wrapped, over the run */

struct mra_ctx {
	struct ibv_context *ctx;
	int (*post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
	int (*post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
	int (*post_srq_recv)(struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *, struct ibv_qp_init_attr_ex *);
};

/* A QP's own SGE setters, saved when they were replaced. */
struct mra_qpx {
	struct ibv_qp_ex *qpx;		/* written last (release); never cleared */
	void (*set_sge)(struct ibv_qp_ex *, uint32_t, uint64_t, uint32_t);
	void (*set_sge_list)(struct ibv_qp_ex *, size_t, const struct ibv_sge *);
};

static struct mra_qpx mra_qpxs[MRA_QPX_SLOTS];

static struct mra_ctx mra_ctxs[MRA_CTX_MAX];
static unsigned mra_nctx;
static __thread int mra_depth;	/* >0: inside an interposed call */

/*
 * The real function at the version verbs.h links against.  RTLD_NEXT
 * searches the global scope only: a libibverbs that arrived as a
 * dependency of a library dlopen()ed RTLD_LOCAL (UCX's libuct_ib) is not
 * in it, though its callers still bind to ours.  Then the loaded copy is
 * asked directly; the handle is kept, so it stays loaded while its
 * functions are saved here.
 */
static void *mra_real(const char *name, const char *version)
{
	static void *local;
	void *f = dlvsym(RTLD_NEXT, name, version);

	if (f)
		return f;
	if (!local)
		local = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	return local ? dlvsym(local, name, version) : NULL;
}

#define MRA_REAL(name, version)							\
	static __typeof__(name) *real;						\
	if (!real)								\
		real = (__typeof__(name) *)mra_real(#name, version);		\
	if (!real) {								\
		errno = ENOSYS;							\
	}

/* Newest first: a context address malloc reused is found as the new one. */
static const struct mra_ctx *mra_ctx_of(const struct ibv_context *ctx)
{
	unsigned n = __atomic_load_n(&mra_nctx, __ATOMIC_ACQUIRE);

	while (n--)
		if (mra_ctxs[n].ctx == ctx)
			return &mra_ctxs[n];
	return NULL;
}

static void mra_check_sges(const char *op, const struct ibv_sge *sg, int n)
{
	for (int i = 0; i < n; i++)
		mra_check(op, sg[i].lkey, sg[i].addr, sg[i].length);
}

static int mra_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct mra_tcount *c = mra_tcount();

	mra_count(&c->posts[0]);
	for (const struct ibv_send_wr *w = wr; w; w = w->next) {
		if (w->send_flags & IBV_SEND_INLINE) {
			/* the data is copied at post time; the lkey is ignored */
			__atomic_store_n(&c->sge_inline, c->sge_inline + (uint64_t)w->num_sge,
					 __ATOMIC_RELAXED);
			continue;
		}
		mra_check_sges("ibv_post_send", w->sg_list, w->num_sge);
	}
	return mra_ctx_of(qp->context)->post_send(qp, wr, bad);
}

static void mra_check_recv(const char *op, const struct ibv_recv_wr *wr, int kind)
{
	struct mra_tcount *c = mra_tcount();

	mra_count(&c->posts[kind]);
	for (const struct ibv_recv_wr *w = wr; w; w = w->next)
		mra_check_sges(op, w->sg_list, w->num_sge);
}

static int mra_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	mra_check_recv("ibv_post_recv", wr, 1);
	return mra_ctx_of(qp->context)->post_recv(qp, wr, bad);
}

static int mra_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	mra_check_recv("ibv_post_srq_recv", wr, 2);
	return mra_ctx_of(srq->context)->post_srq_recv(srq, wr, bad);
}

static uint32_t mra_qpx_hash(const struct ibv_qp_ex *qpx)
{
	uint64_t k = (uintptr_t)qpx;

	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	return (uint32_t)(k >> 40) & (MRA_QPX_SLOTS - 1);
}

/* The slot of qpx, or the empty one to take (NULL: table full). */
static struct mra_qpx *mra_qpx_slot(const struct ibv_qp_ex *qpx)
{
	uint32_t h = mra_qpx_hash(qpx);
	struct ibv_qp_ex *k;

	for (uint32_t i = 0; i < MRA_QPX_SLOTS; i++) {
		struct mra_qpx *e = &mra_qpxs[(h + i) & (MRA_QPX_SLOTS - 1)];

		k = __atomic_load_n(&e->qpx, __ATOMIC_ACQUIRE);
		if (k == qpx || !k)
			return e;
	}
	return NULL;
}

static void mra_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct mra_tcount *c = mra_tcount();

	mra_count(&c->posts[3]);
	mra_check("ibv_wr_set_sge", lkey, addr, length);
	mra_qpx_slot(qpx)->set_sge(qpx, lkey, addr, length);
}

static void mra_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sg)
{
	struct mra_tcount *c = mra_tcount();

	mra_count(&c->posts[3]);
	mra_check_sges("ibv_wr_set_sge_list", sg, (int)n);
	mra_qpx_slot(qpx)->set_sge_list(qpx, n, sg);
}

/* Under mra.lock.  A QP address reused after a destroy overwrites its slot:
 * nothing uses the old QP any more. */
static void mra_wrap_qpx(struct ibv_qp *qp)
{
	static struct ibv_qp_ex *(*to_qpx)(struct ibv_qp *);
	static bool full;
	struct ibv_qp_ex *qpx;
	struct mra_qpx *e;

	if (!to_qpx)
		to_qpx = (struct ibv_qp_ex *(*)(struct ibv_qp *))mra_real("ibv_qp_to_qp_ex", "IBVERBS_1.6");
	qpx = to_qpx ? to_qpx(qp) : NULL;
	if (!qpx || !qpx->wr_set_sge || !qpx->wr_set_sge_list)
		return;
	e = mra_qpx_slot(qpx);
	if (!e) {
		if (!full)
			fprintf(stderr, "mrc-audit: more than %d QPs with send ops: ibv_wr_set_sge on the next are not checked\n",
				MRA_QPX_SLOTS);
		full = true;
		return;
	}
	if (qpx->wr_set_sge != mra_wr_set_sge)
		e->set_sge = qpx->wr_set_sge;
	if (qpx->wr_set_sge_list != mra_wr_set_sge_list)
		e->set_sge_list = qpx->wr_set_sge_list;
	__atomic_store_n(&e->qpx, qpx, __ATOMIC_RELEASE);
	qpx->wr_set_sge = mra_wr_set_sge;
	qpx->wr_set_sge_list = mra_wr_set_sge_list;
}

static struct ibv_qp *mra_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp = mra_ctx_of(ctx)->create_qp_ex(ctx, attr);

	if (qp && attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		pthread_mutex_lock(&mra.lock);
		mra_wrap_qpx(qp);
		pthread_mutex_unlock(&mra.lock);
	}
	return qp;
}

static void mra_wrap(struct ibv_context *ctx)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, create_qp_ex);
	struct mra_ctx *c;

	pthread_mutex_lock(&mra.lock);
	if (mra_nctx == MRA_CTX_MAX) {
		pthread_mutex_unlock(&mra.lock);
		fprintf(stderr, "mrc-audit: more than %d device contexts: posts on the next are not checked\n",
			MRA_CTX_MAX);
		return;
	}
	c = &mra_ctxs[mra_nctx];
	*c = (struct mra_ctx){ ctx, ctx->ops.post_send, ctx->ops.post_recv, ctx->ops.post_srq_recv,
			       vctx ? vctx->create_qp_ex : NULL };
	__atomic_store_n(&mra_nctx, mra_nctx + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&mra.lock);
	if (c->post_send)
		ctx->ops.post_send = mra_post_send;
	if (c->post_recv)
		ctx->ops.post_recv = mra_post_recv;
	if (c->post_srq_recv)
		ctx->ops.post_srq_recv = mra_post_srq_recv;
	if (c->create_qp_ex)
		vctx->create_qp_ex = mra_create_qp_ex;
}

MRA_EXPORT struct ibv_context *(ibv_open_device)(struct ibv_device *dev)
{
	MRA_REAL(ibv_open_device, "IBVERBS_1.1");
	struct ibv_context *ctx;

	if (!real)
		return NULL;
	mra_init();
	ctx = real(dev);
	if (ctx && !mra.child)
		mra_wrap(ctx);
	return ctx;
}

/* Before a registration: the record, its watch (before the pages are
 * pinned, so an unmapping in between is seen), the caller's stack.
 * NULL: not recorded (nested call, forked child, no memory). */
static struct mra_reg *mra_reg_begin(void *addr, size_t len)
{
	struct mra_reg *r = NULL;

	if (mra_depth++)
		return NULL;
	mra_init();
	if (mra.child || !len)
		return NULL;
	pthread_mutex_lock(&mra.lock);
	r = mra_reg_alloc();
	if (r) {
		r->va = (uintptr_t)addr;
		r->len = len;
		mra_reg_watch(r);
	}
	pthread_mutex_unlock(&mra.lock);
	if (r) {
		r->depth = backtrace(r->stack, MRA_STACK);
		r->reg_ns = mra_now();
	}
	return r;
}

static struct ibv_mr *mra_reg_end(struct mra_reg *r, struct ibv_mr *mr, enum mra_how how,
				  uint64_t iova, int access)
{
	int err = errno;

	mra_depth--;
	if (!r)
		return mr;
	pthread_mutex_lock(&mra.lock);
	mra.st.reg_ns += mra_now() - r->reg_ns;
	if (!mr) {
		mra.st.reg_fail++;
		mra_reg_discard(r);
	} else {
		mra.st.regs[how]++;
		r->mr = mr;
		r->lkey = mr->lkey;
		r->rkey = mr->rkey;
		r->iova = iova;
		r->access = access;
		r->how = how;
		mra_pages_baseline(r);
		mra_reg_publish(r);
	}
	pthread_mutex_unlock(&mra.lock);
	errno = err;
	return mr;
}

MRA_EXPORT struct ibv_mr *(ibv_reg_mr)(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	MRA_REAL(ibv_reg_mr, "IBVERBS_1.1");
	struct mra_reg *r;

	if (!real)
		return NULL;
	r = mra_reg_begin(addr, length);
	return mra_reg_end(r, real(pd, addr, length, access), MRA_REG_MR, (uintptr_t)addr, access);
}

MRA_EXPORT struct ibv_mr *(ibv_reg_mr_iova)(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				 int access)
{
	MRA_REAL(ibv_reg_mr_iova, "IBVERBS_1.7");
	struct mra_reg *r;

	if (!real)
		return NULL;
	r = mra_reg_begin(addr, length);
	return mra_reg_end(r, real(pd, addr, length, iova, access), MRA_REG_MR_IOVA, iova, access);
}

MRA_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
				unsigned int access)
{
	MRA_REAL(ibv_reg_mr_iova2, "IBVERBS_1.8");
	struct mra_reg *r;

	if (!real)
		return NULL;
	r = mra_reg_begin(addr, length);
	return mra_reg_end(r, real(pd, addr, length, iova, access), MRA_REG_MR_IOVA2, iova,
			   (int)access);
}

/* Not audited: the pages are a device's (a dma-buf), not the process's. */
MRA_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
				 uint64_t iova, int fd, int access)
{
	MRA_REAL(ibv_reg_dmabuf_mr, "IBVERBS_1.12");

	if (!real)
		return NULL;
	mra_init();
	__atomic_fetch_add(&mra.st.dmabuf, 1, __ATOMIC_RELAXED);
	return real(pd, offset, length, iova, fd, access);
}

static struct mra_reg *mra_reg_of(const struct ibv_mr *mr)
{
	struct mra_reg *r = mr ? mra_reg_find(mr->lkey) : NULL;

	return r && r->mr == mr ? r : NULL;
}

MRA_EXPORT int (ibv_dereg_mr)(struct ibv_mr *mr)
{
	MRA_REAL(ibv_dereg_mr, "IBVERBS_1.1");
	struct mra_reg *r;
	uint64_t t0;
	int rc, err;

	if (!real)
		return ENOSYS;
	if (mra_depth++ || mra.child) {
		rc = real(mr);
		mra_depth--;
		return rc;
	}
	pthread_mutex_lock(&mra.lock);
	r = mra_reg_of(mr);
	if (r) {
		mra_reg_unpublish(r);
		mra_reg_settle(r);	/* while its pins hold */
	}
	pthread_mutex_unlock(&mra.lock);
	t0 = mra_now();
	rc = real(mr);
	err = errno;
	pthread_mutex_lock(&mra.lock);
	mra.st.dereg_ns += mra_now() - t0;
	if (rc) {
		mra.st.dereg_fail++;
		if (r)
			mra_reg_publish(r);
	} else {
		mra.st.deregs++;
		if (r)
			mra_reg_retire(r);
	}
	pthread_mutex_unlock(&mra.lock);
	mra_depth--;
	errno = err;
	return rc;
}

/*
 * ibv_rereg_mr: a new translation pins new pages, so it is a new
 * registration (a new record, watched first) and the old one is retired;
 * a change of PD or access keeps the pages, and the record with its
 * invalidation state, under the new keys.
 */
MRA_EXPORT int (ibv_rereg_mr)(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length,
		   int access)
{
	MRA_REAL(ibv_rereg_mr, "IBVERBS_1.1");
	bool moved = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	struct mra_reg *old, *n = NULL;
	uint64_t t0;
	int rc, err;

	if (!real)
		return IBV_REREG_MR_ERR_INPUT;
	if (mra_depth || mra.child)
		return real(mr, flags, pd, addr, length, access);
	if (moved)
		n = mra_reg_begin(addr, length);
	else
		mra_depth++;
	pthread_mutex_lock(&mra.lock);
	old = mra_reg_of(mr);
	if (old) {
		mra_reg_unpublish(old);
		if (moved)
			mra_reg_settle(old);	/* while its pins hold */
	}
	pthread_mutex_unlock(&mra.lock);
	t0 = mra_now();
	rc = real(mr, flags, pd, addr, length, access);
	err = errno;
	mra_depth--;
	pthread_mutex_lock(&mra.lock);
	mra.st.reg_ns += mra_now() - t0;
	if (rc == 0 || rc == IBV_REREG_MR_ERR_DO_FORK_OLD) {
		/* the MR now has what was asked */
		if (flags & IBV_REREG_MR_CHANGE_ACCESS && old)
			old->access = access;
		if (n) {
			mra.st.regs[MRA_REREG_MR]++;
			n->mr = mr;
			n->lkey = mr->lkey;
			n->rkey = mr->rkey;
			n->iova = (uintptr_t)addr;
			n->access = flags & IBV_REREG_MR_CHANGE_ACCESS ? access :
				    old ? old->access : access;
			n->how = MRA_REREG_MR;
			mra_pages_baseline(n);
			if (old)
				mra_reg_retire(old);
			mra_reg_publish(n);
		} else if (old) {
			old->lkey = mr->lkey;
			old->rkey = mr->rkey;
			mra_reg_publish(old);
		}
	} else {
		if (n)
			mra_reg_discard(n);
		if (old && rc <= IBV_REREG_MR_ERR_CMD)
			mra_reg_retire(old);	/* "the MR shouldn't be used" */
		else if (old)
			mra_reg_publish(old);
	}
	pthread_mutex_unlock(&mra.lock);
	errno = err;
	return rc;
}
