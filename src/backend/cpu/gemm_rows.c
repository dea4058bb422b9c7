/* gemm_rows.c: FP32 products whose rows are computed alone (decoding's products, backend.h
 * "rows alone"). C[i][j] starts at beta·C[i][j] and takes A[i][k]·B[k][j] for k = 0 .. K-1 in that
 * order, one fused multiply-add each, so its value depends on row i of A and on B only: not on the
 * call's row count, on which rows share a block or a thread, on the vector width, nor on OpenBLAS's
 * kernel set, whose products round a row otherwise with the number of rows beside it. */
#include <immintrin.h>
#include <pthread.h>
#include <string.h>

#include "backend/cpu/cpu.h"

#ifndef NMT_REAL_DOUBLE /* the gradient check's build (double) never decodes: cpu_gemm serves it */

/* A tile is MR rows by NR columns (12 ymm accumulators, two for B, one broadcast: AVX2's 16);
 * k goes in chunks of KC, so that a column block's chunk of B (KC x NR, 16 KB) stays in L1 while
 * every row tile passes over it. */
enum { MR = 6, NR = 16, KC = 256 };
/* AVX-512: 12 rows by 32 columns (24 of its 32 registers), chunks of 128 (16 KB of B) */
enum { MR5 = 12, NR5 = 32, KC5 = 128 };

/* B's chunk for one column block, [KC][NR]: transposed (tb) or copied out of a tail block, made
 * once per chunk and read by every row tile. One per thread, so no allocation per call. */
static _Thread_local float panel[KC * NR > KC5 * NR5 ? KC * NR : KC5 * NR5] __attribute__((aligned(64)));

/* lanes j < cols of 16 set */
static inline __m256i lanes(int cols, int h)
{
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(cols - 8 * h), idx);
}

/* rows [0, mr) of a tile: C (16 columns, cols of them real) += A[:, k0..k0+kc) · Bp, where row k
 * of Bp is ldp floats apart; first: the tile starts from zero instead of C (beta 0, first chunk) */
static inline __attribute__((always_inline)) void tile(int mr, const float *A, long lda, const float *Bp, long ldp,
                                                       int kc, float *C, long ldc, int cols, int first)
{
    __m256 acc[MR][2];
    __m256i m0 = lanes(cols, 0), m1 = lanes(cols, 1);
    for (int r = 0; r < mr; r++) {
        if (first) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
        else {
            acc[r][0] = _mm256_maskload_ps(C + r * ldc, m0);
            acc[r][1] = _mm256_maskload_ps(C + r * ldc + 8, m1);
        }
    }
    for (int k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(Bp + k * ldp), b1 = _mm256_loadu_ps(Bp + k * ldp + 8);
        for (int r = 0; r < mr; r++) {
            __m256 a = _mm256_broadcast_ss(A + r * lda + k);
            acc[r][0] = _mm256_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm256_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    for (int r = 0; r < mr; r++) {
        _mm256_maskstore_ps(C + r * ldc, m0, acc[r][0]);
        _mm256_maskstore_ps(C + r * ldc + 8, m1, acc[r][1]);
    }
}

/* the tile for any row count, each count compiled on its own (mr a constant in each) */
static void tile_any(int mr, const float *A, long lda, const float *Bp, long ldp, int kc, float *C, long ldc,
                     int cols, int first)
{
    switch (mr) {
    case 6: tile(6, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    case 5: tile(5, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    case 4: tile(4, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    case 3: tile(3, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    case 2: tile(2, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    default: tile(1, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    }
}

/* B's chunk [k0, k0+kc) x [j0, j0+cols) as the tiles read it, rows *ldp floats apart: where it
 * lies (B not transposed, a whole block, few row tiles to read it: a copy would cost more than it
 * saves), else copied into the panel, nr floats a row, zeros past cols */
static const float *panel_fill(int tb, const float *B, long ldb, int k0, int kc, int j0, int cols, int nr, int M,
                               long *ldp)
{
    if (!tb && cols == nr && M <= 24) {
        *ldp = ldb;
        return B + (long)k0 * ldb + j0;
    }
    *ldp = nr;
    if (tb) { /* column j of the chunk is row j0 + j of B: read along it, write across */
        if (cols < nr) memset(panel, 0, sizeof(float) * kc * nr);
        for (int j = 0; j < cols; j++) {
            const float *b = B + (long)(j0 + j) * ldb + k0;
            for (int k = 0; k < kc; k++) panel[k * nr + j] = b[k];
        }
        return panel;
    }
    for (int k = 0; k < kc; k++) {
        memcpy(panel + k * nr, B + (long)(k0 + k) * ldb + j0, sizeof(float) * cols);
        memset(panel + k * nr + cols, 0, sizeof(float) * (nr - cols));
    }
    return panel;
}


/* ---- the same products with AVX-512: each element's sum in the same order, so the same bits ---- */
#define T5 __attribute__((target("avx512f")))

static inline __attribute__((always_inline)) T5 void tile5(int mr, const float *A, long lda, const float *Bp, long ldp, int kc,
                                                           float *C, long ldc, int cols, int first)
{
    __m512 acc[MR5][2];
    __mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffff : (1u << cols) - 1);
    __mmask16 m1 = (__mmask16)(cols >= 32 ? 0xffff : cols <= 16 ? 0 : (1u << (cols - 16)) - 1);
    for (int r = 0; r < mr; r++) {
        acc[r][0] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m0, C + r * ldc);
        acc[r][1] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m1, C + r * ldc + 16);
    }
    for (int k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(Bp + k * ldp), b1 = _mm512_loadu_ps(Bp + k * ldp + 16);
        for (int r = 0; r < mr; r++) {
            __m512 a = _mm512_set1_ps(A[r * lda + k]);
            acc[r][0] = _mm512_fmadd_ps(a, b0, acc[r][0]);
            acc[r][1] = _mm512_fmadd_ps(a, b1, acc[r][1]);
        }
    }
    for (int r = 0; r < mr; r++) {
        _mm512_mask_storeu_ps(C + r * ldc, m0, acc[r][0]);
        _mm512_mask_storeu_ps(C + r * ldc + 16, m1, acc[r][1]);
    }
}

static T5 void tile5_any(int mr, const float *A, long lda, const float *Bp, long ldp, int kc, float *C, long ldc, int cols,
                         int first)
{
    switch (mr) { /* each row count compiled on its own */
#define CASE5(n) case n: tile5(n, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
        CASE5(12) CASE5(11) CASE5(10) CASE5(9) CASE5(8) CASE5(7) CASE5(6) CASE5(5) CASE5(4) CASE5(3) CASE5(2)
#undef CASE5
    default: tile5(1, A, lda, Bp, ldp, kc, C, ldc, cols, first); break;
    }
}

/* one block of nr columns (the form's), every row, every chunk of k in order */
static void rows_block(int wide, int tb, int M, int K, const float *A, long lda, const float *B, long ldb, float *C,
                       long ldc, int j0, int cols, int beta0)
{
    int kcmax = wide ? KC5 : KC, nr = wide ? NR5 : NR, mr = wide ? MR5 : MR;
    for (int k0 = 0; k0 < K; k0 += kcmax) {
        int kc = K - k0 < kcmax ? K - k0 : kcmax;
        long ldp;
        const float *Bp = panel_fill(tb, B, ldb, k0, kc, j0, cols, nr, M, &ldp);
        for (int i = 0; i < M; i += mr) {
            int r = M - i < mr ? M - i : mr, first = beta0 && k0 == 0;
            if (wide) tile5_any(r, A + i * lda + k0, lda, Bp, ldp, kc, C + i * ldc + j0, ldc, cols, first);
            else tile_any(r, A + i * lda + k0, lda, Bp, ldp, kc, C + i * ldc + j0, ldc, cols, first);
        }
    }
}

/* AVX-512 where the CPU has it */
static int wide = -1;
static void wide_check(void)
{
    __builtin_cpu_init();
    if (wide < 0) wide = __builtin_cpu_supports("avx512f");
}
#endif

int cpu_gemm_rows_wide(int want)
{
#ifndef NMT_REAL_DOUBLE
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, wide_check);
    if (want >= 0) wide = want && __builtin_cpu_supports("avx512f");
    return wide;
#else
    (void)want;
    return 0;
#endif
}
#ifndef NMT_REAL_DOUBLE

#endif

/* work (multiply-adds) below which one thread does the whole product */
#define ROWS_TEAM (1L << 17)

void cpu_gemm_rows(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                   real *C, int ldc)
{
#ifdef NMT_REAL_DOUBLE
    cpu_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
#else
    if (ta) { /* no forward product transposes A: gradients are not decoding's */
        cpu_gemm(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc);
        return;
    }
    if (M <= 0 || N <= 0) return;
    if (beta != 0 && beta != 1)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(long)i * ldc + j] *= beta;
    if (K <= 0) {
        if (beta == 0)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) C[(long)i * ldc + j] = 0;
        return;
    }
    cpu_gemm_rows_wide(-1);
    int nr = wide ? NR5 : NR, blocks = (N + nr - 1) / nr, team = (long)M * N * K >= ROWS_TEAM && blocks > 1;
#pragma omp parallel for schedule(static) if (team)
    for (int b = 0; b < blocks; b++) {
        int j0 = b * nr, cols = N - j0 < nr ? N - j0 : nr;
        rows_block(wide, tb, M, K, A, lda, B, ldb, C, ldc, j0, cols, beta == 0);
    }
#endif
}
