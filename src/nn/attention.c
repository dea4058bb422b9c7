/* attention.c: additive attention, forward and backward for one decoder step (MODEL.md
 * sections 2, 5). Backward: with g = dL/dc_i and γ_j = dL/dα_ij from later steps (ξ of Markov
 * and LocFer reads α_i),
 *   dα_j = g · h_j + γ_j,  dh_j += α_j g,  de_j = α_j (dα_j - Σ_k α_k dα_k),
 *   for t_jk = tanh(pre_jk):  dv_k += de_j t_jk,  dpre_jk = de_j v_k (1 - t_jk²),
 *   dUaH_jk += dpre_jk,  dq_k += Σ_j dpre_jk,  dM_ok += ξ_jo dpre_jk,  dξ_jo = Σ_k dpre_jk M_ok.
 * Each row's energies, softmax and context are one fused backend kernel; this file only
 * describes the step to it. */
#include "backend/backend.h"
#include "nn/attention.h"

static bk_attn shape(attn_dims d, const attn_xi *x)
{
    bk_attn a = {d.B, d.Tx, d.Bs, d.na, d.hd, d.ldH, 0, NULL, NULL, NULL, NULL};
    if (x) {
        a.K = x->K;
        a.M = x->M;
        a.xi = x->xi;
        a.dxi = x->dxi;
        a.dM_rows = x->dM_rows;
    }
    return a;
}

void attn_forward(const bk_ctx *x, real *alpha, real *ctx, const real *UaH, const real *q, const real *v,
                  const real *H, const int *xlen, const int *src, const attn_xi *xf, attn_dims d)
{
    bk_attn a = shape(d, xf);
    x->b->attn_forward(alpha, ctx, UaH, q, v, H, xlen, src, &a);
}

void attn_backward(const bk_ctx *x, real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                   const real *alpha, const real *UaH, const real *q, const real *v,
                   const real *H, const int *xlen, const attn_xi *xf, attn_dims d, real *tmp)
{
    bk_attn a = shape(d, xf);
    x->b->attn_backward(dq, dUaH, dH, dv_rows, dctx, dalpha, alpha, UaH, q, v, H, xlen, &a, tmp);
}
