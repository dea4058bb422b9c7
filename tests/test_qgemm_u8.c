/* test_qgemm_u8.c: the AVX2 int8 kernel (src/backend/cpu/qgemm_u8.c) against integer sums
 * written here: its s32 sums are exact, so every output must equal the reference's conversion
 * bit for bit, on sizes with every tail of rows (mod 4), groups of k (mod 4) and columns (mod 16),
 * padded row strides, beta 0 and 1, bytes at the ends of both ranges (where vpmaddubsw's 16-bit
 * pair sums saturate if the weights had 8 bits), and large products (the threaded path). */
/* kernel sets: one: integer sums of our own kernel, no BLAS in them (tests/cli/kernels.sh) */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/qgemm_u8.h"
#include "base/rng.h"
#include "test.h"

static rng R;

/* uniform in [lo, hi], or only the ends when ends */
static int pick(int lo, int hi, int ends)
{
    if (ends) return rng_u64(&R) & 1 ? hi : lo;
    return lo + (int)(rng_u64(&R) % (uint64_t)(hi - lo + 1));
}

static int one_case(int M, int K, int N, int beta, int ends)
{
    int lda = qu8_kpad(K) + (int)(rng_u64(&R) % 3) * 4, ldc = N + 3;
    int8_t *w = malloc((size_t)K * N);
    uint8_t *A = malloc((size_t)M * lda);
    float *scale = malloc(sizeof(float) * N), *rscale = malloc(sizeof(float) * M), *C = malloc(sizeof(float) * M * ldc), *want = malloc(sizeof(float) * M * ldc);
    for (size_t i = 0; i < (size_t)K * N; i++) w[i] = (int8_t)pick(-31, 31, ends);
    for (size_t i = 0; i < (size_t)M * lda; i++) A[i] = (uint8_t)pick(1, 255, ends); /* pads too: their weights are 0 */
    for (int n = 0; n < N; n++) scale[n] = (float)(rng_uniform(&R) * 1e-3 + 1e-5);
    for (int m = 0; m < M; m++) rscale[m] = (float)(rng_uniform(&R) * 2 + 1e-3);
    for (size_t i = 0; i < (size_t)M * ldc; i++) C[i] = want[i] = (float)(rng_uniform(&R) - 0.5);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int64_t s = 0;
            for (int k = 0; k < K; k++) s += ((int64_t)A[(size_t)m * lda + k] - 128) * w[(size_t)k * N + n];
            float v = (float)s * scale[n] * rscale[m];
            want[(size_t)m * ldc + n] = beta ? v + want[(size_t)m * ldc + n] : v;
        }
    qu8_weights p;
    int bad = qu8_pack(&p, w, K, N) != 0;
    if (!bad) {
        qu8_gemm(&p, M, A, lda, scale, rscale, beta, C, ldc);
        /* columns past N (the row stride's slack) must be left alone */
        bad = memcmp(C, want, sizeof(float) * M * ldc) != 0;
        for (int i = 0; bad && i < M * ldc; i++)
            if (C[i] != want[i]) {
                fprintf(stderr, "M %d K %d N %d beta %d: C[%d,%d] = %.9g, expected %.9g\n", M, K, N, beta, i / ldc,
                        i % ldc, (double)C[i], (double)want[i]);
                break;
            }
    }
    qu8_free(&p);
    free(w), free(A), free(scale), free(rscale), free(C), free(want);
    return bad;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    rng_seed(&R, 8);
    /* every tail: rows 1-9, K 1-9 and 61-67, N 1-17 and 31-33 */
    for (int M = 1; M <= 9; M++)
        for (int K = 1; K <= 67; K += K == 9 ? 52 : 1)
            for (int N = 1; N <= 33; N += N == 17 ? 14 : 1) {
                int beta = (M + K + N) & 1;
                CHECKF(!one_case(M, K, N, beta, 0), "M %d K %d N %d beta %d", M, K, N, beta);
            }
    /* the largest sums: every product at ±(255-128)·31 or -128·31 */
    for (int i = 0; i < 8; i++) CHECK(!one_case(1 + i, 500 + i, 40 + i, i & 1, 1));
    /* decoder-sized products, large enough for a team of threads */
    CHECK(!one_case(60, 620, quick ? 300 : 1000, 0, 0));
    CHECK(!one_case(13, 1000, 520, 1, 0));
    return test_done("test_qgemm_u8");
}
