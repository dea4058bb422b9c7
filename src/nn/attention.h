/* attention.h: the additive alignment model of MODEL.md sections 2 and 5 for one decoder step:
 *   e_ij = v_a · tanh(q_i + U_a h_j + b_a [+ M_a ξ_ij]),  α_i = softmax over the real source
 *   positions,  c_i = Σ_j α_ij h_j,
 * where the query q_i (W_a s_{i-1}, plus R_a c_{i-1} for RecAtt) is formed by the caller, U_a h_j
 * + b_a (UaH) once per sentence, and ξ_ij (Markov, LocFer) is a window of earlier attention
 * weights given per position. Rows run in parallel. */
#ifndef NMT_ATTENTION_H
#define NMT_ATTENTION_H

#include "backend/backend.h"
#include "base/real.h"

typedef struct attn_dims {
    int B, Tx;     /* query rows, padded source length */
    int Bs;        /* source sentences in the UaH/H layout (= B in training) */
    int na;        /* alignment hidden units n' */
    int hd;        /* annotation size (2n) */
    int ldH;       /* row stride of H (>= hd) */
} attn_dims;

/* The per-position features of Markov and LocFer, and what their backward needs. */
typedef struct attn_xi {
    int K;                 /* features per position, 2k+1 */
    const real *M;         /* [K, n'] M_a */
    const real *xi;        /* [B, Tx, K] this step's features */
    real *dxi;             /* backward: [B, Tx, K], written */
    real *dM_rows;         /* backward: [B, K*n'], each row's share of dM_a, accumulated */
} attn_xi;

/* UaH [Tx,Bs,na] (row j*Bs+s); H [Tx,Bs,*] stride ldH; q [B,na]; xlen[Bs] real source lengths;
 * src[b] the source sentence of query row b (NULL: row b reads sentence b, training's case; in
 * beam search several hypotheses read one sentence); xf NULL or the ξ features. Writes alpha
 * [B,Tx] (zeros past the sentence's length) and ctx [B,hd]. */
void attn_forward(const bk_ctx *x, real *alpha, real *ctx, const real *UaH, const real *q, const real *v,
                  const real *H, const int *xlen, const int *src, const attn_xi *xf, attn_dims d);

/* From dctx [B,hd] (and dalpha [B,Tx], gradient reaching α_i directly from later steps, or
 * NULL): writes dq [B,na]; ADDS into dUaH [Tx,B,na], dH [Tx,B,*] (stride ldH) and dv_rows
 * [B,na] (each row's share of dv, summed by the caller once per batch, so that rows never write
 * to shared memory); fills xf->dxi and xf->dM_rows when xf is given. Recomputes tanh rather than
 * storing a [Tx,B,na] cache per step. tmp: scratch of B*Tx reals. */
void attn_backward(const bk_ctx *x, real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                   const real *alpha, const real *UaH, const real *q, const real *v,
                   const real *H, const int *xlen, const attn_xi *xf, attn_dims d, real *tmp);

#endif
