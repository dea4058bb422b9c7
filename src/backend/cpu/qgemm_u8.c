/* qgemm_u8.c: the int8 product of CPUs with AVX2 and no VNNI (gemm_dnnl.c's u8 form), our own
 * kernel: u8 activations times s8 weights of 31 levels, packed once at load, two groups of byte
 * products summed in 16 bits before they are widened (which oneDNN's kernels cannot assume).
 * The sums are exact (s32): C = s_n (Σ_k a[m,k] w[k,n] - 128 Σ_k w[k,n]) (+ C), the same as
 * oneDNN's (NMT_INT8=onednn) to the bit. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/qgemm_u8.h"

/* columns in a block (two ymm of eight s32 sums) and rows a kernel call holds in registers: 8
 * accumulators, 2 weight vectors, a broadcast and the ones of vpmaddwd fit in AVX2's 16 */
enum { NB = 16, MR = 4 };

/* Blocks of 16 columns; in each, k in groups of four: 64 bytes, column j's four weights at 4j
 * (the bytes vpmaddubsw multiplies with one broadcast group of four activations). Padding is 0. */
int qu8_pack(qu8_weights *p, const int8_t *w, int K, int N)
{
    *p = (qu8_weights){.K = K, .N = N, .Kp = qu8_kpad(K), .Np = (N + NB - 1) / NB * NB};
    p->w = aligned_alloc(32, (size_t)p->Kp * p->Np);
    p->colsum = malloc(sizeof(int32_t) * p->Np);
    if (!p->w || !p->colsum) { qu8_free(p); return -1; }
    memset(p->w, 0, (size_t)p->Kp * p->Np);
    memset(p->colsum, 0, sizeof(int32_t) * p->Np);
    int G = p->Kp / 4;
    for (int k = 0; k < K; k++)
        for (int n = 0; n < N; n++) {
            int8_t v = w[(size_t)k * N + n];
            p->w[((size_t)(n / NB) * G + k / 4) * 4 * NB + (n % NB) * 4 + k % 4] = v;
            p->colsum[n] += v;
        }
    return 0;
}

void qu8_free(qu8_weights *p)
{
    free(p->w);
    free(p->colsum);
    p->w = NULL;
    p->colsum = NULL;
}

/* group g's four bytes of a row, as one s32 broadcast to every lane */
static inline __m256i group4(const uint8_t *row, int g)
{
    int32_t v;
    memcpy(&v, row + 4 * g, 4);
    return _mm256_set1_epi32(v);
}

/* C rows [0, mr) of one block (cols columns of 16 valid) from the s32 sums: (sum - 128 colsum)
 * converted, times the column's scale, times the row's, plus C when beta */
static inline void block_store(__m256i acc[MR][2], int mr, const int32_t *colsum, const float *scale,
                               const float *rscale, int beta, float *C, int ldc, int cols)
{
    for (int r = 0; r < mr; r++) {
        float *c = C + (size_t)r * ldc;
        __m256 rs = _mm256_set1_ps(rscale[r]);
        if (cols == NB) {
            for (int h = 0; h < 2; h++) {
                __m256i comp = _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(colsum + 8 * h)), 7);
                __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(acc[r][h], comp)),
                                         _mm256_loadu_ps(scale + 8 * h));
                v = _mm256_mul_ps(v, rs);
                if (beta) v = _mm256_add_ps(v, _mm256_loadu_ps(c + 8 * h));
                _mm256_storeu_ps(c + 8 * h, v);
            }
            continue;
        }
        int32_t s[NB];
        _mm256_storeu_si256((__m256i *)s, acc[r][0]);
        _mm256_storeu_si256((__m256i *)(s + 8), acc[r][1]);
        for (int j = 0; j < cols; j++) {
            float v = (float)(s[j] - 128 * colsum[j]) * scale[j] * rscale[r];
            c[j] = beta ? v + c[j] : v;
        }
    }
}

/* acc += the s32 sums of two groups: vpmaddubsw multiplies a's u8 by w's s8 and adds pairs into
 * s16; with |w| <= 31 two such sums still fit (2 · 2 · 255 · 31 < 2^15), so the groups' are added
 * in s16 (vpaddw) and only then widened by vpmaddwd: five instructions for 64 products where one
 * group at a time takes six, on the two ports that multiply (the kernel's bound) three for four */
#define DOT8(acc, a, b, wa, wb) \
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(a, wa), \
                                                                   _mm256_maddubs_epi16(b, wb)), ones))

/* MR rows of A against one packed block of G groups (G even), the accumulators named so that
 * they stay in registers (an array of them was partly kept on the stack) */
static void block_sums4(__m256i acc[MR][2], const uint8_t *A, int lda, const int8_t *wb, int G)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    const uint8_t *a0 = A, *a1 = A + lda, *a2 = A + 2 * (size_t)lda, *a3 = A + 3 * (size_t)lda;
    for (int g = 0; g < G; g += 2, wb += 8 * NB) {
        __m256i w0 = _mm256_load_si256((const __m256i *)wb), w1 = _mm256_load_si256((const __m256i *)(wb + 32));
        __m256i v0 = _mm256_load_si256((const __m256i *)(wb + 64)), v1 = _mm256_load_si256((const __m256i *)(wb + 96));
        __m256i a = group4(a0, g), b = group4(a0, g + 1);
        DOT8(c00, a, b, w0, v0); DOT8(c01, a, b, w1, v1);
        a = group4(a1, g), b = group4(a1, g + 1);
        DOT8(c10, a, b, w0, v0); DOT8(c11, a, b, w1, v1);
        a = group4(a2, g), b = group4(a2, g + 1);
        DOT8(c20, a, b, w0, v0); DOT8(c21, a, b, w1, v1);
        a = group4(a3, g), b = group4(a3, g + 1);
        DOT8(c30, a, b, w0, v0); DOT8(c31, a, b, w1, v1);
    }
    acc[0][0] = c00, acc[0][1] = c01, acc[1][0] = c10, acc[1][1] = c11;
    acc[2][0] = c20, acc[2][1] = c21, acc[3][0] = c30, acc[3][1] = c31;
}

/* one row of A against one packed block (the rows past the last four) */
static void block_sums1(__m256i acc[2], const uint8_t *A, const int8_t *wb, int G)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i c0 = _mm256_setzero_si256(), c1 = c0;
    for (int g = 0; g < G; g += 2, wb += 8 * NB) {
        __m256i a = group4(A, g), b = group4(A, g + 1);
        DOT8(c0, a, b, _mm256_load_si256((const __m256i *)wb), _mm256_load_si256((const __m256i *)(wb + 64)));
        DOT8(c1, a, b, _mm256_load_si256((const __m256i *)(wb + 32)), _mm256_load_si256((const __m256i *)(wb + 96)));
    }
    acc[0] = c0, acc[1] = c1;
}

/* one block of 16 columns over all M rows, MR at a time */
static void column_block(const qu8_weights *p, int b, int M, const uint8_t *A, int lda, const float *scale,
                         const float *rscale, int beta, float *C, int ldc)
{
    __m256i acc[MR][2];
    int G = p->Kp / 4, n0 = b * NB, cols = p->N - n0 < NB ? p->N - n0 : NB;
    const int8_t *wb = p->w + (size_t)b * G * 4 * NB;
    for (int m = 0; m < M; m += MR) {
        int mr = M - m < MR ? M - m : MR;
        const uint8_t *a = A + (size_t)m * lda;
        if (mr == MR) block_sums4(acc, a, lda, wb, G);
        else
            for (int r = 0; r < mr; r++) block_sums1(acc[r], a + (size_t)r * lda, wb, G);
        block_store(acc, mr, p->colsum + n0, scale + n0, rscale + m, beta, C + (size_t)m * ldc + n0, ldc, cols);
    }
}

/* Rows in chunks of MC, so that a chunk's activations stay in L1 and its outputs in L2 while
 * every column block passes over them (all M rows at once left the decoder's products, a few
 * hundred rows, 1.4x slower a product than a few rows); in a chunk, column blocks over the
 * threads where the product is large enough to pay for a team (inside a parallel region OpenMP
 * runs it on the calling thread alone). */
#define QU8_TEAM (1L << 18)
enum { MC = 32 };

void qu8_gemm(const qu8_weights *p, int M, const uint8_t *A, int lda, const float *scale, const float *rscale, int beta,
              float *C, int ldc)
{
    int blocks = p->Np / NB, team = (long)M * p->Kp * p->Np >= QU8_TEAM && blocks > 1;
#pragma omp parallel if (team)
    for (int m = 0; m < M; m += MC) {
        int mc = M - m < MC ? M - m : MC;
#pragma omp for schedule(static) nowait
        for (int b = 0; b < blocks; b++)
            column_block(p, b, mc, A + (size_t)m * lda, lda, scale, rscale + m, beta, C + (size_t)m * ldc, ldc);
    }
}
