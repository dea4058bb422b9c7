/* tf_layer.c: the Transformer's attention, linear maps and blocks (docs/MODEL-MAP.md), forward
 * and backward. Heads are column blocks of the projections, so no transpose is ever made: the
 * batched products read each head's columns in place through their strides. */
#include <math.h>

#include "base/fault.h"
#include "nn/tf_layer.h"

/* the products' places for a (group, head) pair: Q-like rows, K-like rows, P blocks */
static bk_batch batch_of(const tf_att *a, long oa, long ia, long ob, long ib, long oc, long ic, const int *sel)
{
    bk_batch s = {a->n * a->heads, a->heads, oa, ia, ob, ib, oc, ic, sel};
    return s;
}

void tf_att_forward(const bk_ctx *x, const tf_att *a, real *P, real *Pd, const real *mask, real *ctx, int ldc, long oc)
{
    const backend_ops *bk = x->b;
    long pb = (long)a->Tq * a->Tk, ph = (long)a->heads * pb; /* one head's block, one group's */
    int dk = a->dk;
    bk_batch s = batch_of(a, a->oq, dk, a->ok, dk, ph, pb, a->sel);
    bk->gemm_batched(0, 1, a->Tq, a->Tk, dk, a->Q, a->ldq, a->K, a->ldk, 0, P, a->Tk, &s);
    bk->attn_softmax(P, a->klen, a->kfix, a->n, a->heads, a->Tq, a->Tk, a->causal, a->qoff, (real)(1 / sqrt((double)dk)));
    if (mask) bk->mul_rows(Pd, a->Tk, P, a->Tk, mask, a->Tk, a->n * a->heads * a->Tq, a->Tk);
    else Pd = P;
    s = batch_of(a, ph, pb, a->ok, dk, oc, dk, a->sel);
    bk->gemm_batched(0, 0, a->Tq, dk, a->Tk, Pd, a->Tk, a->V, a->ldk, 0, ctx, ldc, &s);
}

void tf_att_backward(const bk_ctx *x, const tf_att *a, const real *P, const real *Pd, const real *mask, const real *dctx,
                     int ldc, long oc, real *dP, real *dQ, int lddq, long odq, real *dK, real *dV, int lddk, long odk,
                     const tf_pgrad *pg)
{
    const backend_ops *bk = x->b;
    long pb = (long)a->Tq * a->Tk, ph = (long)a->heads * pb;
    int dk = a->dk;
    if (!mask) Pd = P;
    /* dPd = dctx Vᵀ; dV = Pdᵀ dctx */
    bk_batch s = batch_of(a, oc, dk, a->ok, dk, ph, pb, NULL);
    bk->gemm_batched(0, 1, a->Tq, a->Tk, dk, dctx, ldc, a->V, a->ldk, 0, dP, a->Tk, &s);
    s = batch_of(a, ph, pb, oc, dk, odk, dk, NULL);
    bk->gemm_batched(1, 0, a->Tk, dk, a->Tq, Pd, a->Tk, dctx, ldc, 0, dV, lddk, &s);
    long rows = (long)a->n * a->heads * a->Tq;
    if (mask) bk->mul_rows(dP, a->Tk, dP, a->Tk, mask, a->Tk, (int)rows, a->Tk);
    /* dP is now d/dP (the mask undone): a cost on P itself adds here, one [Tq, Tk] block per
     * group, the groups' blocks ph apart */
    if (pg && !FAULT(FAULT_TF_GUIDED))
        bk->add_rows(dP + pg->head * pb, (int)ph, dP + pg->head * pb, (int)ph, pg->g, (int)pb, a->n, (int)pb);
    bk->attn_softmax_backward(dP, P, dP, rows, a->Tk, (real)(1 / sqrt((double)dk)));
    /* dQ = dS K; dK = dSᵀ Q */
    s = batch_of(a, ph, pb, a->ok, dk, odq, dk, NULL);
    bk->gemm_batched(0, 0, a->Tq, dk, a->Tk, dP, a->Tk, a->K, a->ldk, 0, dQ, lddq, &s);
    s = batch_of(a, ph, pb, a->oq, dk, odk, dk, NULL);
    if (FAULT(FAULT_TF_KEYS)) bk->zero_rows(dK, lddk, a->n * a->Tk, a->heads * dk);
    else bk->gemm_batched(1, 0, a->Tk, dk, a->Tq, dP, a->Tk, a->Q, a->ldq, 0, dK, lddk, &s);
}

void tf_linear(const bk_ctx *x, real *y, const real *a, int R, int in, int out, bk_weight W, const real *b)
{
    if (R <= 0) return;
    if (b) x->b->repeat_row(y, b, R, out);
    mmw(x, R, out, in, a, in, W, b ? 1 : 0, y, out);
}

void tf_linear_backward(const bk_ctx *x, real *da, real *dW, real *db, const real *dy, const real *a, const real *W, int R,
                        int in, int out)
{
    if (R <= 0) return;
    if (dW) mm(x, 1, 0, in, out, R, a, in, dy, out, 1, dW, out);
    if (db) colsum_add(x, db, dy, R, out, out);
    if (da) mm(x, 0, 1, R, in, out, dy, out, W, out, 0, da, in);
}

const real *tf_block_in(const bk_ctx *x, tf_blk *k, const real *xin, const real *g, const real *b, int R, int d,
                        const nmt_config *c)
{
    if (c->post_norm) return xin;
    x->b->layer_norm(k->n, d, k->st, xin, d, g, b, R, d, (real)c->ln_eps);
    return k->n;
}

void tf_block_out(const bk_ctx *x, tf_blk *k, real *xout, const real *xin, real *o, const real *g, const real *b, int R,
                  int d, const nmt_config *c)
{
    const backend_ops *bk = x->b;
    if (k->mask) bk->mul_rows(o, d, o, d, k->mask, d, R, d);
    if (!c->post_norm) {
        bk->add_rows(xout, d, xin, d, o, d, R, d);
        return;
    }
    bk->add_rows(k->n, d, xin, d, o, d, R, d);
    bk->layer_norm(xout, d, k->st, k->n, d, g, b, R, d, (real)c->ln_eps);
}

void tf_block_back_out(const bk_ctx *x, const tf_blk *k, const real *G, real *DO, real *GS, real *gx, real *dg, real *db,
                       const real *g, int R, int d, const nmt_config *c)
{
    const backend_ops *bk = x->b;
    const real *dn = G; /* the gradient reaching the residual sum */
    if (c->post_norm) {
        if (FAULT(FAULT_TF_NORM)) bk->copy_rows(GS, d, G, d, R, d);
        else bk->layer_norm_backward(GS, d, 0, gx, G, d, k->n, d, k->st, g, R, d);
        colsum_add(x, dg, gx, R, d, d);
        colsum_add(x, db, G, R, d, d);
        dn = GS;
    }
    if (k->mask) bk->mul_rows(DO, d, dn, d, k->mask, d, R, d);
    else bk->copy_rows(DO, d, dn, d, R, d);
}

void tf_block_back_in(const bk_ctx *x, const tf_blk *k, real *G, const real *dA, const real *GS, real *gx, real *dg,
                      real *db, const real *xin, const real *g, int R, int d, const nmt_config *c)
{
    const backend_ops *bk = x->b;
    if (c->post_norm) {
        bk->add_rows(G, d, GS, d, dA, d, R, d);
        return;
    }
    if (FAULT(FAULT_TF_RESIDUAL)) bk->zero_rows(G, d, R, d);
    bk->layer_norm_backward(G, d, 1, gx, dA, d, xin, d, k->st, g, R, d);
    colsum_add(x, dg, gx, R, d, d);
    colsum_add(x, db, dA, R, d, d);
}
