/* test_gemm_rows.c: decoding's products (src/backend/cpu/gemm_rows.c) hold their promise: every
 * element is beta·C plus A[i][k]·B[k][j] fused in k order, so they equal a scalar fmaf loop to
 * the bit, for any row count, shape, stride, transpose, beta, thread count, and in the AVX2 and
 * AVX-512 forms alike; and they agree with OpenBLAS's product within float rounding. */
/* kernel sets: all: decoding's products against the fmaf loop and OpenBLAS's (tests/cli/kernels.sh) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "test.h"
#include "backend/cpu/cpu.h"
#include "base/rng.h"

static rng R;

static float unit(void) { return (float)(rng_uniform(&R) - 0.5); }

/* the contract, written out: C[i][j] = beta C[i][j] (0 when beta is 0), then fmaf over k */
static void reference(int tb, int M, int N, int K, const float *A, int lda, const float *B, int ldb, float beta,
                      float *C, int ldc)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float c = beta == 0 ? 0 : beta == 1 ? C[(long)i * ldc + j] : beta * C[(long)i * ldc + j];
            for (int k = 0; k < K; k++)
                c = fmaf(A[(long)i * lda + k], tb ? B[(long)j * ldb + k] : B[(long)k * ldb + j], c);
            C[(long)i * ldc + j] = c;
        }
}

/* one shape: the kernel against the reference (bits), OpenBLAS (near), and row by row (bits) */
static void one(int tb, int M, int N, int K, float beta)
{
    int lda = K + 3, ldb = (tb ? K : N) + 5, ldc = N + 7;
    size_t na = (size_t)M * lda, nb = (size_t)(tb ? N : K) * ldb, nc = (size_t)M * ldc;
    float *A = malloc(sizeof(float) * na), *B = malloc(sizeof(float) * nb), *C0 = malloc(sizeof(float) * nc);
    float *got = malloc(sizeof(float) * nc), *want = malloc(sizeof(float) * nc), *alone = malloc(sizeof(float) * nc);
    for (size_t i = 0; i < na; i++) A[i] = unit();
    for (size_t i = 0; i < nb; i++) B[i] = unit();
    for (size_t i = 0; i < nc; i++) C0[i] = beta == 0 ? NAN : unit(); /* beta 0 must not read C */
    memcpy(got, C0, sizeof(float) * nc), memcpy(want, C0, sizeof(float) * nc), memcpy(alone, C0, sizeof(float) * nc);
    cpu_gemm_rows(0, tb, M, N, K, A, lda, B, ldb, beta, got, ldc);
    reference(tb, M, N, K, A, lda, B, ldb, beta, want, ldc);
    for (int i = 0; i < M; i++)
        cpu_gemm_rows(0, tb, 1, N, K, A + (long)i * lda, lda, B, ldb, beta, alone + (long)i * ldc, ldc);
    int same = !memcmp(got, want, sizeof(float) * nc), rows = !memcmp(got, alone, sizeof(float) * nc);
    CHECKF(same, "tb %d M %d N %d K %d beta %g: not the fmaf loop's bits (slack past N included)", tb, M, N, K,
           (double)beta);
    CHECKF(rows, "tb %d M %d N %d K %d: a row computed alone differs from it in the batch", tb, M, N, K);
    /* OpenBLAS (or oneDNN) sums otherwise: near, not equal */
    if (beta != 0) memcpy(alone, C0, sizeof(float) * nc);
    cpu_gemm(0, tb, M, N, K, A, lda, B, ldb, beta, alone, ldc);
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double d = fabs((double)got[(long)i * ldc + j] - alone[(long)i * ldc + j]);
            worst = d > worst ? d : worst;
        }
    CHECKF(worst <= 1e-6 * (K + 1), "tb %d M %d N %d K %d: %g from cpu_gemm", tb, M, N, K, worst);
    free(A), free(B), free(C0), free(got), free(want), free(alone);
}

static void shapes(int quick)
{
    static const int Ms[] = {1, 2, 5, 6, 7, 11, 12, 13, 25, 64, 97};
    static const int NKs[][2] = {{1, 1}, {3, 17}, {16, 8}, {31, 255}, {32, 256}, {33, 257}, {47, 300}, {130, 620}};
    static const float betas[] = {0, 1, 0.5f};
    int nm = quick ? 5 : (int)(sizeof Ms / sizeof *Ms);
    for (int tb = 0; tb < 2; tb++)
        for (int m = 0; m < nm; m++)
            for (size_t s = 0; s < sizeof NKs / sizeof *NKs; s++)
                one(tb, Ms[m], NKs[s][0], NKs[s][1], betas[(m + s) % 3]);
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    rng_seed(&R, 46);
    int wide = cpu_gemm_rows_wide(-1);
    shapes(quick);
    if (wide) { /* the AVX2 form on an AVX-512 CPU: the same bits (the reference checks both) */
        cpu_gemm_rows_wide(0);
        shapes(quick);
        cpu_gemm_rows_wide(1);
    }
    printf("gemm_rows: %s form%s checked\n", wide ? "AVX-512" : "AVX2", wide ? " and AVX2's" : "");
#ifdef _OPENMP
    /* a product large enough for a team, on one thread and on two: the same bits */
    int was = omp_get_max_threads();
    omp_set_num_threads(2);
    one(0, 200, 700, 500, 1);
    omp_set_num_threads(1);
    one(0, 200, 700, 500, 1);
    omp_set_num_threads(was);
#endif
    return test_done("test_gemm_rows");
}
