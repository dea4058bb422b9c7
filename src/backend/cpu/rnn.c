/* rnn.c: the CPU kernels of the recurrent layers: the GRU step's element-wise parts (the
 * products around them are the caller's) and one decoder step's additive attention, rows in
 * parallel, with the ξ window of Markov / LocFer. The math and its derivation are in nn/gru.c
 * and nn/attention.c. */
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/vec.h"
#include "base/fault.h"

/* ==== GRU ===================================================================================== */

void cpu_gru_gates(real *z, real *r, real *rh, const real *a, int lda, const real *zr, const real *hp, int ldhp,
                   int B, int n)
{
    for (int b = 0; b < B; b++) {
        const real *ab = a + (size_t)b * lda, *zrb = zr + (size_t)b * 2 * n;
        const real *hpb = hp ? hp + (size_t)b * ldhp : NULL;
        real *zb = z + (size_t)b * n, *rb = r + (size_t)b * n, *rhb = rh + (size_t)b * n;
        for (int k = 0; k < n; k++) { zb[k] = ab[k] + zrb[k]; rb[k] = ab[n + k] + zrb[n + k]; }
        vec_sigmoid(zb, zb, n);
        vec_sigmoid(rb, rb, n);
        for (int k = 0; k < n; k++) rhb[k] = hpb ? rb[k] * hpb[k] : 0;
    }
}

void cpu_gru_state(real *h, int ldh, real *hc, const real *z, const real *a, int lda, const real *uq,
                   const real *hp, int ldhp, const unsigned char *mask, int B, int n)
{
    for (int b = 0; b < B; b++) {
        const real *ab = a + (size_t)b * lda, *uqb = uq + (size_t)b * n;
        const real *hpb = hp ? hp + (size_t)b * ldhp : NULL, *zb = z + (size_t)b * n;
        real *hcb = hc + (size_t)b * n, *hb = h + (size_t)b * ldh;
        int real_row = !mask || mask[b];
        for (int k = 0; k < n; k++) hcb[k] = ab[k] + uqb[k];
        vec_tanh(hcb, hcb, n);
        for (int k = 0; k < n; k++) {
            real prev = hpb ? hpb[k] : 0;
            hb[k] = real_row ? prev + zb[k] * (hcb[k] - prev) : prev;
        }
    }
}

void cpu_gru_grad_state(real *da, int ldda, real *dhp, const real *g, const real *z, const real *hc,
                        const real *hp, int ldhp, const unsigned char *mask, int B, int n)
{
    for (int b = 0; b < B; b++) {
        const real *gb = g + (size_t)b * n, *hpb = hp ? hp + (size_t)b * ldhp : NULL;
        const real *zb = z + (size_t)b * n, *hcb = hc + (size_t)b * n;
        real *dab = da + (size_t)b * ldda, *dhpb = dhp + (size_t)b * n;
        if (mask && !mask[b]) { /* padding copied h: the gradient passes straight through */
            memset(dab, 0, sizeof(real) * 3 * n);
            if (!FAULT(FAULT_ENC_CARRY))
                for (int k = 0; k < n; k++) dhpb[k] += gb[k];
            continue;
        }
        for (int k = 0; k < n; k++) {
            real prev = hpb ? hpb[k] : 0;
            real dz = gb[k] * (hcb[k] - prev);
            dhpb[k] += gb[k] * (1 - zb[k]);
            dab[2 * n + k] = gb[k] * zb[k] * (1 - hcb[k] * hcb[k]);
            dab[k] = dz * zb[k] * (1 - zb[k]);
        }
    }
}

void cpu_gru_grad_reset(real *da, int ldda, real *dhp, const real *dq, const real *r, const real *hp, int ldhp,
                        const unsigned char *mask, int B, int n)
{
    for (int b = 0; b < B; b++) {
        if (mask && !mask[b]) continue;
        const real *hpb = hp + (size_t)b * ldhp, *rb = r + (size_t)b * n, *dqb = dq + (size_t)b * n;
        real *dab = da + (size_t)b * ldda, *dhpb = dhp + (size_t)b * n;
        for (int k = 0; k < n; k++) {
            if (!FAULT(FAULT_GRU_RESET_PATH)) dhpb[k] += dqb[k] * rb[k];
            dab[n + k] = dqb[k] * hpb[k] * rb[k] * (1 - rb[k]);
        }
    }
}

/* ==== attention =============================================================================== */

/* pre_k = q_k + UaH_jk (+ Σ_o ξ_jo M_ok) for one position */
static void preact(real *pre, const real *q, const real *u, const bk_attn *a, const real *xij)
{
    int na = a->na;
    for (int k = 0; k < na; k++) pre[k] = q[k] + u[k];
    if (!a->K) return;
    for (int o = 0; o < a->K; o++) {
        real f = xij[o];
        if (f == 0) continue;
        const real *M = a->M + (size_t)o * na;
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

/* One query row: energies over the sentence's L positions, softmax, context. */
static void attn_row(real *al, real *cb, real *pre, const real *UaH, const real *qb, const real *v, const real *H,
                     const real *xib, int sb, int L, const bk_attn *a)
{
    int na = a->na, K = a->K;
    real mx = -INFINITY;
    for (int j = 0; j < L; j++) {
        preact(pre, qb, UaH + ((size_t)j * a->Bs + sb) * na, a, K ? xib + (size_t)j * K : NULL);
        real e = score(pre, v, na);
        al[j] = e;
        if (e > mx) mx = e;
    }
    real sum = (real)vec_exp_sum(al, al, mx, L);
    for (int j = 0; j < L; j++) al[j] /= sum;
    for (int j = L; j < a->Tx; j++) al[j] = 0;
    memset(cb, 0, sizeof(real) * a->hd);
    for (int j = 0; j < L; j++) vec_axpy(cb, al[j], H + ((size_t)j * a->Bs + sb) * a->ldH, a->hd);
}

void cpu_attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v, const real *H,
                      const int *xlen, const int *src, const bk_attn *a)
{
    int B = a->B, na = a->na, Tx = a->Tx;
#pragma omp parallel if (cpu_team(B, (long)B * Tx * (na + a->hd)))
    {
        real pre[na > 0 ? na : 1];
#pragma omp for schedule(static)
        for (int b = 0; b < B; b++) {
            int sb = src ? src[b] : b;
            attn_row(alpha + (size_t)b * Tx, ctx + (size_t)b * a->hd, pre, UaH, q + (size_t)b * na, v, H,
                     a->K ? a->xi + (size_t)b * Tx * a->K : NULL, sb, xlen[sb], a);
        }
    }
}

/* One row's backward: dα_j, then the softmax Jacobian, in two passes over j. */
static void attn_row_backward(int b, real *pre, real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx,
                              const real *dalpha, const real *alpha, const real *UaH, const real *q, const real *v,
                              const real *H, int L, const bk_attn *a, real *tmp)
{
    int B = a->B, na = a->na, hd = a->hd, Tx = a->Tx, K = a->K;
    real *de_buf = tmp + (size_t)b * Tx;
    const real *al = alpha + (size_t)b * Tx, *g = dctx + (size_t)b * hd, *qb = q + (size_t)b * na;
    real *dqb = dq + (size_t)b * na, *dvb = dv_rows + (size_t)b * na;
    real s = 0;
    for (int j = 0; j < L; j++) {
        const real *h = H + ((size_t)j * B + b) * a->ldH;
        real da = (dalpha ? dalpha[(size_t)b * Tx + j] : 0) + vec_dot(g, h, hd);
        vec_axpy(dH + ((size_t)j * B + b) * a->ldH, al[j], g, hd);
        de_buf[j] = da;
        s += al[j] * da;
    }
    memset(dqb, 0, sizeof(real) * na);
    if (K) memset(a->dxi + (size_t)b * Tx * K, 0, sizeof(real) * Tx * K);
    for (int j = 0; j < L; j++) {
        real de = al[j] * (de_buf[j] - (FAULT(FAULT_ATTN_SOFTMAX) ? 0 : s));
        const real *u = UaH + ((size_t)j * B + b) * na;
        const real *xij = K ? a->xi + ((size_t)b * Tx + j) * K : NULL;
        preact(pre, qb, u, a, xij);
        score_backward(pre, dvb, dUaH + ((size_t)j * B + b) * na, dqb, v, de, na); /* pre now holds dpre */
        if (!K) continue;
        real *dxij = a->dxi + ((size_t)b * Tx + j) * K, *dMb = a->dM_rows + (size_t)b * K * na;
        for (int o = 0; o < K; o++) {
            const real *M = a->M + (size_t)o * na;
            real acc = 0;
            for (int k = 0; k < na; k++) {
                acc += pre[k] * M[k];
                dMb[(size_t)o * na + k] += xij[o] * pre[k];
            }
            dxij[o] = acc;
        }
    }
}

void cpu_attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                       const real *alpha, const real *UaH, const real *q, const real *v, const real *H,
                       const int *xlen, const bk_attn *a, real *tmp)
{
    int B = a->B, na = a->na;
#pragma omp parallel if (cpu_team(B, (long)B * a->Tx * (na + a->hd)))
    {
        real pre[na > 0 ? na : 1];
#pragma omp for schedule(static)
        for (int b = 0; b < B; b++)
            attn_row_backward(b, pre, dq, dUaH, dH, dv_rows, dctx, dalpha, alpha, UaH, q, v, H, xlen[b], a, tmp);
    }
}

/* The ξ window of Markov / LocFer, serial: H·Tx·(2k+1) values, a few per position. Padding
 * positions (j >= len) keep their zero rows, so that the energies of a row read no stale ξ. */
void cpu_attn_window(real *xi, const real *src, int ld, const int *len, int H, int Tx, int k)
{
    int K = 2 * k + 1;
    memset(xi, 0, sizeof(real) * H * Tx * K);
    for (int b = 0; b < H; b++)
        for (int j = 0; j < len[b]; j++)
            for (int o = 0; o < K; o++) {
                int p = j + o - k;
                if (p >= 0 && p < len[b]) xi[((size_t)b * Tx + j) * K + o] = src[(size_t)b * ld + p];
            }
}

/* the window's backward: each α_p collects what every window that read it sends back, in the
 * order of j then o */
void cpu_attn_window_backward(real *dsrc, const real *dxi, const int *len, int B, int Tx, int k)
{
    int K = 2 * k + 1;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < len[b]; j++)
            for (int o = 0; o < K; o++) {
                int p = j + o - k;
                if (p >= 0 && p < len[b]) dsrc[(size_t)b * Tx + p] += dxi[((size_t)b * Tx + j) * K + o];
            }
}
