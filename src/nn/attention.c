/* attention.c: additive attention, forward and backward for one decoder step (MODEL.md
 * sections 2, 5). Backward: with g = dL/dc_i and γ_j = dL/dα_ij from later steps (ξ of Markov
 * and LocFer reads α_i),
 *   dα_j = g · h_j + γ_j,  dh_j += α_j g,  de_j = α_j (dα_j - Σ_k α_k dα_k),
 *   for t_jk = tanh(pre_jk):  dv_k += de_j t_jk,  dpre_jk = de_j v_k (1 - t_jk²),
 *   dUaH_jk += dpre_jk,  dq_k += Σ_j dpre_jk,  dM_ok += ξ_jo dpre_jk,  dξ_jo = Σ_k dpre_jk M_ok. */
#include <string.h>

#include "nn/attention.h"
#include "base/fault.h"
#include "backend/cpu/vec.h"

/* pre_k = q_k + UaH_jk (+ Σ_o ξ_jo M_ok) for one position */
static void preact(real *pre, const real *q, const real *u, const attn_xi *x, const real *xij, int na)
{
    for (int k = 0; k < na; k++) pre[k] = q[k] + u[k];
    if (!x) return;
    for (int o = 0; o < x->K; o++) {
        real f = xij[o];
        if (f == 0) continue;
        const real *M = x->M + (size_t)o * na;
        for (int k = 0; k < na; k++) pre[k] += f * M[k];
    }
}

/* v · tanh(pre) */
static real score(const real *pre, const real *v, int na)
{
#if NMT_SIMD
    __m256 acc = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= na; k += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(v + k), tanh8(_mm256_loadu_ps(pre + k)), acc);
    if (k < na) acc = _mm256_fmadd_ps(load_part(v + k, na - k), tanh8(load_part(pre + k, na - k)), acc);
    return hsum8(acc);
#else
    real e = 0;
    for (int k = 0; k < na; k++) e += v[k] * rtanh(pre[k]);
    return e;
#endif
}

/* for t = tanh(pre): dv += de t, dpre = de v (1 - t²) into pre, du += dpre, dq += dpre */
static void score_backward(real *pre, real *dv, real *du, real *dq, const real *v, real de, int na)
{
    int k = 0;
#if NMT_SIMD
    __m256 dE = _mm256_set1_ps(de), one = _mm256_set1_ps(1.0f);
    for (; k + 8 <= na; k += 8) {
        __m256 t = tanh8(_mm256_loadu_ps(pre + k));
        _mm256_storeu_ps(dv + k, _mm256_fmadd_ps(dE, t, _mm256_loadu_ps(dv + k)));
        __m256 dp = _mm256_mul_ps(_mm256_mul_ps(dE, _mm256_loadu_ps(v + k)), _mm256_fnmadd_ps(t, t, one));
        _mm256_storeu_ps(du + k, _mm256_add_ps(_mm256_loadu_ps(du + k), dp));
        _mm256_storeu_ps(dq + k, _mm256_add_ps(_mm256_loadu_ps(dq + k), dp));
        _mm256_storeu_ps(pre + k, dp);
    }
#endif
    for (; k < na; k++) {
        real t = rtanh(pre[k]);
        dv[k] += de * t;
        real dp = de * v[k] * (1 - t * t);
        du[k] += dp;
        dq[k] += dp;
        pre[k] = dp;
    }
}

void attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v,
                  const real *H, const int *xlen, const int *src, const attn_xi *x, attn_dims d)
{
    int B = d.B, Bs = d.Bs, na = d.na, hd = d.hd, Tx = d.Tx;
#pragma omp parallel
    {
        real pre[na > 0 ? na : 1];
#pragma omp for schedule(static)
        for (int b = 0; b < B; b++) {
            real *al = alpha + (size_t)b * Tx, *cb = ctx + (size_t)b * hd;
            const real *qb = q + (size_t)b * na;
            int sb = src ? src[b] : b, L = xlen[sb];
            real mx = -INFINITY;
            for (int j = 0; j < L; j++) {
                preact(pre, qb, UaH + ((size_t)j * Bs + sb) * na, x, x ? x->xi + ((size_t)b * Tx + j) * x->K : NULL, na);
                real e = score(pre, v, na);
                al[j] = e;
                if (e > mx) mx = e;
            }
            real sum = (real)vec_exp_sum(al, al, mx, L);
            for (int j = 0; j < L; j++) al[j] /= sum;
            for (int j = L; j < Tx; j++) al[j] = 0;
            memset(cb, 0, sizeof(real) * hd);
            for (int j = 0; j < L; j++) vec_axpy(cb, al[j], H + ((size_t)j * Bs + sb) * d.ldH, hd);
        }
    }
}

void attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                   const real *alpha, const real *UaH, const real *q, const real *v,
                   const real *H, const int *xlen, const attn_xi *x, attn_dims d, real *tmp)
{
    int B = d.B, na = d.na, hd = d.hd, Tx = d.Tx;
#pragma omp parallel
    {
        real pre[na > 0 ? na : 1];
#pragma omp for schedule(static)
        for (int b = 0; b < B; b++) {
            real *de_buf = tmp + (size_t)b * Tx;
            const real *al = alpha + (size_t)b * Tx, *g = dctx + (size_t)b * hd;
            const real *qb = q + (size_t)b * na;
            real *dqb = dq + (size_t)b * na, *dvb = dv_rows + (size_t)b * na;
            int L = xlen[b];
            /* dα_j, then the softmax Jacobian, in two passes over j */
            real s = 0;
            for (int j = 0; j < L; j++) {
                const real *h = H + ((size_t)j * B + b) * d.ldH;
                real da = (dalpha ? dalpha[(size_t)b * Tx + j] : 0) + vec_dot(g, h, hd);
                vec_axpy(dH + ((size_t)j * B + b) * d.ldH, al[j], g, hd);
                de_buf[j] = da;
                s += al[j] * da;
            }
            memset(dqb, 0, sizeof(real) * na);
            if (x) memset(x->dxi + (size_t)b * Tx * x->K, 0, sizeof(real) * Tx * x->K);
            for (int j = 0; j < L; j++) {
                real de = al[j] * (de_buf[j] - (FAULT(FAULT_ATTN_SOFTMAX) ? 0 : s));
                const real *u = UaH + ((size_t)j * B + b) * na;
                const real *xij = x ? x->xi + ((size_t)b * Tx + j) * x->K : NULL;
                real *du = dUaH + ((size_t)j * B + b) * na;
                preact(pre, qb, u, x, xij, na);
                score_backward(pre, dvb, du, dqb, v, de, na); /* pre now holds dpre, for the ξ terms */
                if (!x) continue;
                real *dxij = x->dxi + ((size_t)b * Tx + j) * x->K, *dMb = x->dM_rows + (size_t)b * x->K * na;
                for (int o = 0; o < x->K; o++) {
                    const real *M = x->M + (size_t)o * na;
                    real acc = 0;
                    for (int k = 0; k < na; k++) {
                        acc += pre[k] * M[k];
                        dMb[(size_t)o * na + k] += xij[o] * pre[k];
                    }
                    dxij[o] = acc;
                }
            }
        }
    }
}
