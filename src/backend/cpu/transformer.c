/* transformer.c: the CPU kernels of the Transformer family (backend.h): layer norm and its
 * backward, multi-head attention's masked softmax and its backward, the batched products of the
 * heads, the feed-forward activations' derivatives, and the strided gather that reorders a
 * key/value cache. Sums run in a fixed order, so results do not depend on the thread count. */
#include <immintrin.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "backend/cpu/cpu.h"

/* ---- layer norm ---- */

typedef struct ln_job {
    real *y, *stats;
    const real *x, *gamma, *beta;
    int ldy, ldx, cols;
    real eps;
} ln_job;

/* Rows r .. r+n (n <= 4) of the norm: each row's sums in order from its first column, as one row
 * alone would take them, the rows side by side so that their chains of additions overlap (a
 * search step's rows are d wide, and one chain of d dependent additions was the norm's time). */
static void ln_block(const ln_job *j, long r, int n)
{
    const real *x[4];
    double s[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0}, mu[4];
    for (int i = 0; i < 4; i++) x[i] = j->x + (r + (i < n ? i : 0)) * j->ldx; /* past n: row r again, unused */
    for (int k = 0; k < j->cols; k++)
        for (int i = 0; i < 4; i++) s[i] += x[i][k];
    for (int i = 0; i < 4; i++) mu[i] = s[i] / j->cols;
    for (int k = 0; k < j->cols; k++)
        for (int i = 0; i < 4; i++) q[i] += (x[i][k] - mu[i]) * (x[i][k] - mu[i]);
    for (int i = 0; i < n; i++) {
        real rstd = (real)(1.0 / sqrt(q[i] / j->cols + j->eps)), m = (real)mu[i];
        real *y = j->y + (r + i) * j->ldy;
        for (int k = 0; k < j->cols; k++) y[k] = (x[i][k] - m) * rstd * j->gamma[k] + j->beta[k];
        j->stats[2 * (r + i)] = m;
        j->stats[2 * (r + i) + 1] = rstd;
    }
}

static void ln_rows(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    for (long r = lo; r < hi; r += 4) ln_block(ctx, r, hi - r < 4 ? (int)(hi - r) : 4);
}

void cpu_layer_norm(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma, const real *beta, int R,
                    int cols, real eps)
{
    ln_job j = {y, stats, x, gamma, beta, ldy, ldx, cols, eps};
    cpu_parallel_for(R, 16, 0, ln_rows, &j);
}

typedef struct lnb_job {
    real *dx, *gx;
    const real *dy, *x, *stats, *gamma;
    int lddx, acc, lddy, ldx, cols;
} lnb_job;

static void lnb_rows(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const lnb_job *j = ctx;
    int n = j->cols;
    for (long r = lo; r < hi; r++) {
        const real *dy = j->dy + r * j->lddy, *x = j->x + r * j->ldx;
        real *dx = j->dx + r * j->lddx, *gx = j->gx + r * n;
        real mu = j->stats[2 * r], rstd = j->stats[2 * r + 1];
        double sg = 0, sgx = 0;
        for (int k = 0; k < n; k++) {
            real xh = (x[k] - mu) * rstd, g = j->gamma[k] * dy[k];
            gx[k] = dy[k] * xh;
            sg += g;
            sgx += (double)g * xh;
        }
        real mg = (real)(sg / n), mgx = (real)(sgx / n);
        for (int k = 0; k < n; k++) {
            real xh = (x[k] - mu) * rstd, v = rstd * (j->gamma[k] * dy[k] - mg - xh * mgx);
            dx[k] = j->acc ? dx[k] + v : v;
        }
    }
}

void cpu_layer_norm_backward(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy, const real *x, int ldx,
                             const real *stats, const real *gamma, int R, int cols)
{
    lnb_job j = {dx, gx, dy, x, stats, gamma, lddx, acc, lddy, ldx, cols};
    cpu_parallel_for(R, 16, 0, lnb_rows, &j);
}

/* ---- attention's softmax ---- */

typedef struct sm_job {
    real *S;
    const int *klen;
    int kfix, heads, Tq, Tk, causal, qoff;
    real scale;
} sm_job;

static void sm_rows(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const sm_job *j = ctx;
    for (long r = lo; r < hi; r++) {
        long o = r / ((long)j->heads * j->Tq);
        int i = (int)(r % j->Tq);
        int len = j->klen ? j->klen[o] : j->kfix;
        if (j->causal && i + j->qoff + 1 < len) len = i + j->qoff + 1;
        if (len > j->Tk) len = j->Tk;
        if (len < 0) len = 0;
        real *s = j->S + r * j->Tk;
        real mx = 0;
        for (int k = 0; k < len; k++)
            if (k == 0 || s[k] * j->scale > mx) mx = s[k] * j->scale;
        double sum = 0;
        for (int k = 0; k < len; k++) {
            s[k] = rexp(s[k] * j->scale - mx);
            sum += s[k];
        }
        real inv = (real)(1.0 / sum);
        for (int k = 0; k < len; k++) s[k] *= inv;
        for (int k = len; k < j->Tk; k++) s[k] = 0;
    }
}

void cpu_attn_softmax(real *S, const int *klen, int kfix, int n, int heads, int Tq, int Tk, int causal, int qoff,
                      real scale)
{
    sm_job j = {S, klen, kfix, heads, Tq, Tk, causal, qoff, scale};
    cpu_parallel_for((long)n * heads * Tq, 64, 0, sm_rows, &j);
}

typedef struct smb_job {
    real *dS;
    const real *P, *dP;
    int Tk;
    real scale;
} smb_job;

static void smb_rows(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const smb_job *j = ctx;
    for (long r = lo; r < hi; r++) {
        const real *p = j->P + r * j->Tk, *dp = j->dP + r * j->Tk;
        real *ds = j->dS + r * j->Tk;
        double s = 0;
        for (int k = 0; k < j->Tk; k++) s += (double)p[k] * dp[k];
        real m = (real)s;
        for (int k = 0; k < j->Tk; k++) ds[k] = j->scale * p[k] * (dp[k] - m);
    }
}

void cpu_attn_softmax_backward(real *dS, const real *P, const real *dP, long rows, int Tk, real scale)
{
    smb_job j = {dS, P, dP, Tk, scale};
    cpu_parallel_for(rows, 64, 0, smb_rows, &j);
}

/* ---- batched products ---- */

typedef struct bmm_job {
    int ta, tb, M, N, K, lda, ldb, ldc;
    const real *A, *B;
    real *C, beta;
    const bk_batch *s;
} bmm_job;

/* one product, each C[i][j] a sum over k in order (rows alone, as gemm_rows): the reference
 * form, for products too deep for bmm_tiled's tile */
static void bmm_one(const bmm_job *j, const real *A, const real *B, real *C)
{
    for (int i = 0; i < j->M; i++) {
        real *c = C + (long)i * j->ldc;
        for (int n = 0; n < j->N; n++) {
            real acc = 0;
            for (int k = 0; k < j->K; k++) {
                real a = j->ta ? A[(long)k * j->lda + i] : A[(long)i * j->lda + k];
                real b = j->tb ? B[(long)n * j->ldb + k] : B[(long)k * j->ldb + n];
                acc += a * b;
            }
            c[n] = j->beta == 0 ? acc : j->beta * c[n] + acc;
        }
    }
}

#ifndef NMT_REAL_DOUBLE /* the AVX forms below are float's; the float64 gradient checks use bmm_one */
/* bmm_tiled's blocks: BMM_NR columns of op(B) at each k, BMM_MR rows of A at once: 4 x 16 sums
 * in eight AVX registers. Packed columns hold BMM_KMAX rows at most (BMM_K4 in bmm_tiled4's). */
enum { BMM_NR = 16, BMM_MR = 4, BMM_KMAX = 1024, BMM_K4 = 128 };

/* Where a block reads op(B)'s 16 columns at row k: packed [K, 16] (op(B) = Bᵀ), or B's row k
 * itself (op(B) = B, the columns contiguous; lanes past the block's columns read as zeros,
 * never from B; COLS_FULL: all 16 lanes, plain loads). */
enum { COLS_PACKED, COLS_ROWS, COLS_FULL };
typedef struct bmm_cols {
    const real *p;   /* packed: bt; rows: B + n0 */
    long ld;
    __m256i m0, m1;  /* the lanes in the block */
} bmm_cols;

static inline __attribute__((always_inline)) void cols_at(const bmm_cols *c, int mode, int k, __m256 *b0, __m256 *b1)
{
    if (mode == COLS_PACKED) {
        *b0 = _mm256_loadu_ps(c->p + (long)k * BMM_NR);
        *b1 = _mm256_loadu_ps(c->p + (long)k * BMM_NR + 8);
    } else if (mode == COLS_FULL) {
        const real *r = c->p + (long)k * c->ld;
        *b0 = _mm256_loadu_ps(r);
        *b1 = _mm256_loadu_ps(r + 8);
    } else {
        const real *r = c->p + (long)k * c->ld;
        *b0 = _mm256_maskload_ps(r, c->m0);
        *b1 = _mm256_maskload_ps(r + 8, c->m1);
    }
}

/* R rows from i0 of C's columns n0 .. n0+nr (R and mode constants where it is inlined) */
static inline __attribute__((always_inline)) void bmm_block(const bmm_job *j, const real *A, const bmm_cols *cols,
                                                            int mode, real *C, int i0, int R, int n0, int nr)
{
    const real *ar[BMM_MR];
    long step = j->ta ? j->lda : 1;
    for (int r = 0; r < R; r++) ar[r] = j->ta ? A + i0 + r : A + (long)(i0 + r) * j->lda;
    __m256 c[BMM_MR][2];
    for (int r = 0; r < R; r++) c[r][0] = c[r][1] = _mm256_setzero_ps();
    for (int k = 0; k < j->K; k++) {
        __m256 b0, b1;
        cols_at(cols, mode, k, &b0, &b1);
        for (int r = 0; r < R; r++) {
            __m256 a = _mm256_broadcast_ss(ar[r] + k * step);
            /* a product, then a sum: bmm_one's two roundings, not a fused one */
            c[r][0] = _mm256_add_ps(c[r][0], _mm256_mul_ps(a, b0));
            c[r][1] = _mm256_add_ps(c[r][1], _mm256_mul_ps(a, b1));
        }
    }
    real out[BMM_NR];
    for (int r = 0; r < R; r++) {
        real *cr = C + (long)(i0 + r) * j->ldc + n0;
        _mm256_storeu_ps(out, c[r][0]);
        _mm256_storeu_ps(out + 8, c[r][1]);
        for (int t = 0; t < nr; t++) cr[t] = j->beta == 0 ? out[t] : j->beta * cr[t] + out[t];
    }
}

/* every row of C's columns n0 .. n0+nr: blocks of 4 rows, then the rest one at a time */
static inline __attribute__((always_inline)) void bmm_rows(const bmm_job *j, const real *A, const bmm_cols *cols,
                                                           int mode, real *C, int n0, int nr)
{
    int i0 = 0;
    for (; i0 + BMM_MR <= j->M; i0 += BMM_MR) bmm_block(j, A, cols, mode, C, i0, BMM_MR, n0, nr);
    for (; i0 < j->M; i0++) bmm_block(j, A, cols, mode, C, i0, 1, n0, nr);
}

/* bt[k][t0 + t] = b[t][k0 + k] for an 8 x 8 block: `rows` (1..8) rows of B read contiguous, the
 * rest zeros, transposed in registers (unpack, shuffle, permute), written as 8 rows of bt */
static void transpose8(const real *b, long ldb, int rows, real *bt)
{
    __m256 r[8], u[8], v[8];
    for (int t = 0; t < 8; t++) r[t] = t < rows ? _mm256_loadu_ps(b + t * ldb) : _mm256_setzero_ps();
    for (int t = 0; t < 8; t += 2) {
        u[t] = _mm256_unpacklo_ps(r[t], r[t + 1]);
        u[t + 1] = _mm256_unpackhi_ps(r[t], r[t + 1]);
    }
    for (int t = 0; t < 8; t += 4) {
        v[t] = _mm256_shuffle_ps(u[t], u[t + 2], 0x44);
        v[t + 1] = _mm256_shuffle_ps(u[t], u[t + 2], 0xEE);
        v[t + 2] = _mm256_shuffle_ps(u[t + 1], u[t + 3], 0x44);
        v[t + 3] = _mm256_shuffle_ps(u[t + 1], u[t + 3], 0xEE);
    }
    for (int k = 0; k < 4; k++) {
        _mm256_storeu_ps(bt + (long)k * BMM_NR, _mm256_permute2f128_ps(v[k], v[k + 4], 0x20));
        _mm256_storeu_ps(bt + (long)(k + 4) * BMM_NR, _mm256_permute2f128_ps(v[k], v[k + 4], 0x31));
    }
}

/* columns n0 .. n0+nr of Bᵀ (B [N, K]) into bt [K, BMM_NR], zeros past nr: 8 x 8 blocks (the
 * last one short of columns padded with zeros in registers), then the last k one at a time */
static void bmm_pack_t(const bmm_job *j, const real *B, real *bt, int n0, int nr)
{
    int t8 = (nr + 7) & ~7, k8 = j->K & ~7;
    for (int t = 0; t < t8; t += 8)
        for (int k = 0; k < k8; k += 8)
            transpose8(B + (long)(n0 + t) * j->ldb + k, j->ldb, nr - t < 8 ? nr - t : 8, bt + (long)k * BMM_NR + t);
    for (int k = k8; k < j->K; k++)
        for (int t = 0; t < BMM_NR; t++) bt[(long)k * BMM_NR + t] = t < nr ? B[(long)(n0 + t) * j->ldb + k] : 0;
    if (t8 < BMM_NR) /* the second 8 columns unused: zeros for the blocks' loads */
        for (int k = 0; k < k8; k++) memset(bt + (long)k * BMM_NR + 8, 0, sizeof(real) * 8);
}

/* The same sums as bmm_one, each C[i][j] = Σ_k in order from 0, one product and one addition at
 * a time, so the same bits: only the loops are reordered, k outside the columns, so that 16
 * columns and 4 rows go at once. op(B) = B is read in place (16 contiguous columns a row); Bᵀ is
 * packed once per 16 columns, 8 x 8 blocks transposed in registers. */
static void bmm_tiled(const bmm_job *j, const real *A, const real *B, real *C)
{
    real bt[BMM_KMAX * BMM_NR];
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int n0 = 0; n0 < j->N; n0 += BMM_NR) {
        int nr = j->N - n0 < BMM_NR ? j->N - n0 : BMM_NR;
        bmm_cols c = {.ld = j->ldb,
                      .m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane),
                      .m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), lane)};
        if (!j->tb) {
            c.p = B + n0;
            if (nr == BMM_NR) bmm_rows(j, A, &c, COLS_FULL, C, n0, nr);
            else bmm_rows(j, A, &c, COLS_ROWS, C, n0, nr);
        } else {
            bmm_pack_t(j, B, bt, n0, nr);
            c.p = bt;
            bmm_rows(j, A, &c, COLS_PACKED, C, n0, nr);
        }
    }
}

/* bmm_tiled4's columns n0 .. n0+nr of four one-row products, each reading its own op(B) */
static inline __attribute__((always_inline)) void bmm_block4(const bmm_job *j, const real *const *A,
                                                             const bmm_cols *cols, int mode, real *const *C, int n0,
                                                             int nr)
{
    long step = j->ta ? j->lda : 1;
    __m256 c[4][2];
    for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm256_setzero_ps();
    for (int k = 0; k < j->K; k++)
        for (int r = 0; r < 4; r++) {
            __m256 b0, b1, a = _mm256_broadcast_ss(A[r] + k * step);
            cols_at(&cols[r], mode, k, &b0, &b1);
            c[r][0] = _mm256_add_ps(c[r][0], _mm256_mul_ps(a, b0));
            c[r][1] = _mm256_add_ps(c[r][1], _mm256_mul_ps(a, b1));
        }
    real out[BMM_NR];
    for (int r = 0; r < 4; r++) {
        _mm256_storeu_ps(out, c[r][0]);
        _mm256_storeu_ps(out + 8, c[r][1]);
        for (int t = 0; t < nr; t++) C[r][n0 + t] = j->beta == 0 ? out[t] : j->beta * C[r][n0 + t] + out[t];
    }
}

/* Four one-row products at once, each with its own A, B and C (bmm_body's). A single row is one
 * chain of dependent additions per 8 columns; four side by side keep the adder busy. Each element
 * is still bmm_one's sum, the same bits. */
static void bmm_tiled4(const bmm_job *j, const real *const *A, const real *const *B, real *const *C)
{
    real bt[4][BMM_K4 * BMM_NR];
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int n0 = 0; n0 < j->N; n0 += BMM_NR) {
        int nr = j->N - n0 < BMM_NR ? j->N - n0 : BMM_NR;
        bmm_cols c[4];
        for (int r = 0; r < 4; r++) {
            c[r] = (bmm_cols){.p = j->tb ? bt[r] : B[r] + n0, .ld = j->ldb,
                              .m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr), lane),
                              .m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(nr - 8), lane)};
            if (j->tb) bmm_pack_t(j, B[r], bt[r], n0, nr);
        }
        if (j->tb) bmm_block4(j, A, c, COLS_PACKED, C, n0, nr);
        else if (nr == BMM_NR) bmm_block4(j, A, c, COLS_FULL, C, n0, nr);
        else bmm_block4(j, A, c, COLS_ROWS, C, n0, nr);
    }
}
#endif

/* one product at A, B, C: the tiled form where its depth fits the packed tile */
static void bmm_product(const bmm_job *j, const real *A, const real *B, real *C)
{
#ifndef NMT_REAL_DOUBLE
    if (j->K <= BMM_KMAX) {
        bmm_tiled(j, A, B, C);
        return;
    }
#endif
    bmm_one(j, A, B, C);
}

/* product p's operands: group o = p / inner (B's chosen by sel), head p % inner */
static void bmm_at(const bmm_job *j, long p, const real **A, const real **B, real **C)
{
    const bk_batch *s = j->s;
    long o = p / s->inner, k = p % s->inner, ob = s->sel ? s->sel[o] : o;
    *A = j->A + o * s->oa + k * s->ia, *B = j->B + ob * s->ob + k * s->ib, *C = j->C + o * s->oc + k * s->ic;
}

/* Products [lo, hi); one-row ones (the search's self-attention: each hypothesis and head its own
 * cache) four at a time, as the team's chunks of 4 give them */
static void bmm_body(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const bmm_job *j = ctx;
    long p = lo;
#ifndef NMT_REAL_DOUBLE
    for (; j->M == 1 && j->K <= BMM_K4 && p + 4 <= hi; p += 4) {
        const real *A[4], *B[4];
        real *C[4];
        for (int r = 0; r < 4; r++) bmm_at(j, p + r, &A[r], &B[r], &C[r]);
        bmm_tiled4(j, A, B, C);
    }
#endif
    for (; p < hi; p++) {
        const real *A, *B;
        real *C;
        bmm_at(j, p, &A, &B, &C);
        bmm_product(j, A, B, C);
    }
}

/* A search step's encoder-decoder attention asks one-row products whose B the selection picks:
 * the hypotheses of one sentence, side by side, read that sentence's keys (values). For each
 * head, a run of groups with one B is one product of as many rows (A's rows oa apart, C's oc
 * apart), so Bᵀ is packed once and the rows go 4 at a time; each element is still bmm_one's sum,
 * the same bits. Units are (group, head) pairs, so that heads still split across a team; a run
 * belongs to the unit where it starts. */
static void bmm_runs_body(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const bmm_job *j = ctx;
    const bk_batch *s = j->s;
    long groups = s->count / s->inner;
    for (long p = lo; p < hi; p++) {
        long o = p / s->inner, e = o + 1;
        if (o > 0 && s->sel[o] == s->sel[o - 1]) continue;
        while (e < groups && s->sel[e] == s->sel[o]) e++;
        bmm_job r = *j;
        r.M = (int)(e - o), r.lda = (int)s->oa, r.ldc = (int)s->oc;
        const real *A, *B;
        real *C;
        bmm_at(j, p, &A, &B, &C);
        bmm_product(&r, A, B, C);
    }
}

void cpu_gemm_batched(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                      real *C, int ldc, const bk_batch *s)
{
    bmm_job j = {ta, tb, M, N, K, lda, ldb, ldc, A, B, C, beta, s};
    long elems = s->count * ((long)M * N + (long)M * K + (long)N * K);
    int team = cpu_team(s->count, elems) ? 0 : 1;
    if (M == 1 && !ta && s->sel && s->oa == (int)s->oa && s->oc == (int)s->oc)
        cpu_parallel_for(s->count, 1, team, bmm_runs_body, &j);
    else
        cpu_parallel_for(s->count, M == 1 ? 4 : 1, team, bmm_body, &j);
}

/* ---- activations' derivatives from their input ---- */

static const real GELU_C = (real)0.7978845608028654; /* √(2/π) */

static real act_grad_x(int f, real x)
{
    switch (f) {
    case BK_RELU: return x > 0 ? 1 : 0;
    case BK_GELU: {
        real u = GELU_C * (x + (real)0.044715 * x * x * x), t = rtanh(u);
        return (real)0.5 * (1 + t) + (real)0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * (real)0.044715 * x * x);
    }
    case BK_SWISH: {
        real s = rsigmoid(x);
        return s + x * s * (1 - s);
    }
    case BK_TANH: {
        real t = rtanh(x);
        return 1 - t * t;
    }
    case BK_SIGMOID: {
        real s = rsigmoid(x);
        return s * (1 - s);
    }
    default: return 1;
    }
}

typedef struct agx_job {
    int f, lddx, lddy, ldx, cols;
    real *dx;
    const real *dy, *x;
} agx_job;

static void agx_rows(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const agx_job *j = ctx;
    for (long r = lo; r < hi; r++) {
        real *dx = j->dx + r * j->lddx;
        const real *dy = j->dy + r * j->lddy, *x = j->x + r * j->ldx;
        if (j->f == BK_RELU) { /* the general form's product by 1 or 0 (NaN > 0 false: 0), 8 at a time */
            int k = 0;
#ifndef NMT_REAL_DOUBLE
            for (const __m256 one = _mm256_set1_ps(1), zero = _mm256_setzero_ps(); k + 8 <= j->cols; k += 8) {
                __m256 g = _mm256_and_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + k), zero, _CMP_GT_OQ), one);
                _mm256_storeu_ps(dx + k, _mm256_mul_ps(_mm256_loadu_ps(dy + k), g));
            }
#endif
            for (; k < j->cols; k++) dx[k] = dy[k] * act_grad_x(BK_RELU, x[k]);
        } else
            for (int k = 0; k < j->cols; k++) dx[k] = dy[k] * act_grad_x(j->f, x[k]);
    }
}

void cpu_act_grad_x_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *x, int ldx, int R, int cols)
{
    agx_job j = {f, lddx, lddy, ldx, cols, dx, dy, x};
    cpu_parallel_for(R, 16, 0, agx_rows, &j);
}

/* ---- the cache's gather ---- */

void cpu_gather_rows_ld(real *dst, long ldd, const real *src, long lds, const int *ids, int n, long cols)
{
    for (int i = 0; i < n; i++) memcpy(dst + i * ldd, src + ids[i] * lds, sizeof(real) * cols);
}

/* ---- dropout masks drawn on the device's side ---- */

static inline real drop_u(uint64_t seed, long i)
{
    uint64_t z = seed + (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (real)(z >> 40) * (real)(1.0 / 16777216.0);
}

typedef struct dm_job {
    real *m, p, keep;
    uint64_t seed;
} dm_job;

static void dm_span(void *ctx, long lo, long hi, int thread)
{
    (void)thread;
    const dm_job *j = ctx;
    real *m = j->m, p = j->p, keep = j->keep; /* locals: m's stores cannot touch them */
    uint64_t seed = j->seed;
    for (long i = lo; i < hi; i++) m[i] = drop_u(seed, i) >= p ? keep : 0;
}

#ifndef NMT_REAL_DOUBLE
/* dm_span with AVX-512's 64-bit products, 8 entries at once: the same integers, the same exact
 * conversion and comparison, so the same mask (the hashing was 8% of a Transformer's training
 * step on the scalar multiplier) */
__attribute__((target("avx512f,avx512dq,avx512vl"))) static void dm_span512(void *ctx, long lo, long hi, int thread)
{
    const dm_job *j = ctx;
    const __m512i c0 = _mm512_set1_epi64((long long)0x9E3779B97F4A7C15ull),
                  c1 = _mm512_set1_epi64((long long)0xBF58476D1CE4E5B9ull),
                  c2 = _mm512_set1_epi64((long long)0x94D049BB133111EBull), lane = _mm512_setr_epi64(1, 2, 3, 4, 5, 6, 7, 8),
                  seed = _mm512_set1_epi64((long long)j->seed);
    const __m256 p = _mm256_set1_ps(j->p), keep = _mm256_set1_ps(j->keep), unit = _mm256_set1_ps((real)(1.0 / 16777216.0));
    long i = lo;
    for (; i + 8 <= hi; i += 8) {
        __m512i z = _mm512_add_epi64(seed, _mm512_mullo_epi64(_mm512_add_epi64(_mm512_set1_epi64(i), lane), c0));
        z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 30)), c1);
        z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_srli_epi64(z, 27)), c2);
        z = _mm512_xor_si512(z, _mm512_srli_epi64(z, 31));
        __m256 u = _mm256_mul_ps(_mm512_cvtepi64_ps(_mm512_srli_epi64(z, 40)), unit);
        _mm256_storeu_ps(j->m + i, _mm256_maskz_mov_ps(_mm256_cmp_ps_mask(u, p, _CMP_GE_OQ), keep));
    }
    dm_span(ctx, i, hi, thread);
}

static int dm_wide = -1;
static void dm_wide_check(void)
{
    __builtin_cpu_init();
    if (dm_wide < 0) dm_wide = __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}
#endif

int cpu_dropout_wide(int want)
{
#ifndef NMT_REAL_DOUBLE
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, dm_wide_check);
    if (want >= 0) dm_wide = want && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return dm_wide;
#else
    (void)want;
    return 0;
#endif
}

/* each element its own hash of (seed, i): the same mask on any number of threads */
void cpu_dropout_mask(real *m, long n, uint64_t seed, real p)
{
    dm_job j = {m, p, 1 / (1 - p), seed};
#ifndef NMT_REAL_DOUBLE
    if (cpu_dropout_wide(-1)) {
        cpu_parallel_for(n, 4096, 0, dm_span512, &j);
        return;
    }
#endif
    cpu_parallel_for(n, 4096, 0, dm_span, &j);
}
