/* attention.c: additive attention, forward and backward for one decoder step (MODEL.md
 * section 2). Backward: with g = dL/dc_i,
 *   dα_j = g · h_j,  dh_j += α_j g,  de_j = α_j (dα_j - Σ_k α_k dα_k),
 *   for t_jk = tanh(q_k + UaH_jk):  dv_k += de_j t_jk,  dpre_jk = de_j v_k (1 - t_jk²),
 *   dUaH_jk += dpre_jk,  dq_k += Σ_j dpre_jk. */
#include <string.h>

#include "attention.h"
#include "fault.h"

void attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v,
                  const real *H, const int *xlen, const int *src, attn_dims d)
{
    int B = d.B, Bs = d.Bs, na = d.na, hd = d.hd;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < B; b++) {
        real *al = alpha + (size_t)b * d.Tx, *cb = ctx + (size_t)b * hd;
        const real *qb = q + (size_t)b * na;
        int sb = src ? src[b] : b, L = xlen[sb];
        real mx = -INFINITY;
        for (int j = 0; j < L; j++) {
            const real *u = UaH + ((size_t)j * Bs + sb) * na;
            real e = 0;
            for (int k = 0; k < na; k++) e += v[k] * rtanh(qb[k] + u[k]);
            al[j] = e;
            if (e > mx) mx = e;
        }
        real sum = 0;
        for (int j = 0; j < L; j++) { al[j] = rexp(al[j] - mx); sum += al[j]; }
        for (int j = 0; j < L; j++) al[j] /= sum;
        for (int j = L; j < d.Tx; j++) al[j] = 0;
        memset(cb, 0, sizeof(real) * hd);
        for (int j = 0; j < L; j++) {
            const real *h = H + ((size_t)j * Bs + sb) * d.ldH;
            for (int k = 0; k < hd; k++) cb[k] += al[j] * h[k];
        }
    }
}

void attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx,
                   const real *alpha, const real *UaH, const real *q, const real *v,
                   const real *H, const int *xlen, attn_dims d, real *tmp)
{
    int B = d.B, na = d.na, hd = d.hd;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < B; b++) {
        real *de_buf = tmp + (size_t)b * d.Tx;
        const real *al = alpha + (size_t)b * d.Tx, *g = dctx + (size_t)b * hd;
        const real *qb = q + (size_t)b * na;
        real *dqb = dq + (size_t)b * na, *dvb = dv_rows + (size_t)b * na;
        int L = xlen[b];
        /* dα_j, then the softmax Jacobian, in two passes over j */
        real s = 0;
        for (int j = 0; j < L; j++) {
            const real *h = H + ((size_t)j * B + b) * d.ldH;
            real *dh = dH + ((size_t)j * B + b) * d.ldH;
            real da = 0;
            for (int k = 0; k < hd; k++) { da += g[k] * h[k]; dh[k] += al[j] * g[k]; }
            de_buf[j] = da;
            s += al[j] * da;
        }
        memset(dqb, 0, sizeof(real) * na);
        for (int j = 0; j < L; j++) {
            real de = al[j] * (de_buf[j] - (FAULT(FAULT_ATTN_SOFTMAX) ? 0 : s));
            const real *u = UaH + ((size_t)j * B + b) * na;
            real *du = dUaH + ((size_t)j * B + b) * na;
            for (int k = 0; k < na; k++) {
                real t = rtanh(qb[k] + u[k]);
                dvb[k] += de * t;
                real dp = de * v[k] * (1 - t * t);
                du[k] += dp;
                dqb[k] += dp;
            }
        }
    }
}
