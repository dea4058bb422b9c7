/* tf_layer.h: the Transformer's parts (docs/MODEL-MAP.md): multi-head attention over strided
 * queries, keys and values, a block's norm and residual sum (pre- or post-norm) and their
 * backward passes. Training (transformer.c) and the search (decode/tf_infer.c) call the same
 * forward functions; only where the keys live differs. */
#ifndef NMT_TF_LAYER_H
#define NMT_TF_LAYER_H

#include "backend/backend.h"
#include "nn/transformer.h"

/* One attention call: n query groups (sentences, or hypotheses) of Tq rows each, against Tk keys.
 * Group o's query rows start at Q + o·oq (row stride ldq); its keys and values at K, V +
 * s·ok with s = sel[o] (sel NULL: o), row stride ldk. Head h reads columns h·dk .. of each. Key j
 * of group o is seen while j < klen[o] (klen NULL: kfix) and, causal, j <= i + qoff. */
typedef struct tf_att {
    int n, heads, Tq, Tk, dk;
    const real *Q;
    int ldq;
    long oq;
    const real *K, *V;
    int ldk;
    long ok;
    const int *sel, *klen;
    int kfix, causal, qoff;
} tf_att;

/* P [n, heads, Tq, Tk] = softmax(Q Kᵀ/√dk) masked; Pd = P ∘ mask (mask NULL: Pd may be P, and is
 * not written); ctx rows o·oc + i (stride ldc) = Pd V, the heads side by side. */
void tf_att_forward(const bk_ctx *x, const tf_att *a, real *P, real *Pd, const real *mask, real *ctx, int ldc, long oc);
/* A gradient on the weights P of one head themselves, from a cost that reads them (guided
 * alignment's): g [n, Tq, Tk], the gradient of head `head`'s blocks. */
typedef struct tf_pgrad {
    const real *g;
    int head;
} tf_pgrad;

/* From dctx: dQ, dK, dV written (strides lddq / lddk, group offsets odq / odk); dP scratch of P's
 * size; pg (or NULL: none) joins dP before the softmax's backward. sel must be NULL. */
void tf_att_backward(const bk_ctx *x, const tf_att *a, const real *P, const real *Pd, const real *mask, const real *dctx,
                     int ldc, long oc, real *dP, real *dQ, int lddq, long odq, real *dK, real *dV, int lddk, long odk,
                     const tf_pgrad *pg);

/* y [R, out] = a [R, in] · W + b (b NULL: no bias) */
void tf_linear(const bk_ctx *x, real *y, const real *a, int R, int in, int out, bk_weight W, const real *b);
/* The backward of tf_linear: dW += aᵀ dy, db += Σ dy (each skipped when NULL), da = dy Wᵀ
 * (da NULL: not wanted) */
void tf_linear_backward(const bk_ctx *x, real *da, real *dW, real *db, const real *dy, const real *a, const real *W, int R,
                        int in, int out);

/* A block's input: pre-norm LN(xin) into k->n (returned); post-norm xin itself. */
const real *tf_block_in(const bk_ctx *x, tf_blk *k, const real *xin, const real *g, const real *b, int R, int d,
                        const nmt_config *c);
/* The block's output: pre-norm xout = xin + drop(o); post-norm k->n = xin + drop(o), xout =
 * LN(k->n). o may be overwritten. */
void tf_block_out(const bk_ctx *x, tf_blk *k, real *xout, const real *xin, real *o, const real *g, const real *b, int R,
                  int d, const nmt_config *c);
/* Backward, first half: from G = d xout, DO = d o (post-norm: GS = the gradient of k->n, and
 * the norm's dgamma, dbeta; gx scratch [R, d]). */
void tf_block_back_out(const bk_ctx *x, const tf_blk *k, const real *G, real *DO, real *GS, real *gx, real *dg, real *db,
                       const real *g, int R, int d, const nmt_config *c);
/* Second half: from dA = d(the sublayer's input), G becomes d xin (pre-norm: G += LN's
 * backward of dA, with dgamma, dbeta; post-norm: G = GS + dA). */
void tf_block_back_in(const bk_ctx *x, const tf_blk *k, real *G, const real *dA, const real *GS, real *gx, real *dg,
                      real *db, const real *xin, const real *g, int R, int d, const nmt_config *c);

#endif
