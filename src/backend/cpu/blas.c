/* blas.c: matrix products through OpenBLAS's CBLAS interface (float or double per real.h), or
 * oneDNN's when NMT_GEMM=onednn (sgemm_dnnl.c), and the column sums of bias gradients. */
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu.h"
#include "base/err.h"

char *openblas_get_corename(void);

static int onednn;
static void gemm_env(void)
{
    const char *v = getenv("NMT_GEMM");
    onednn = v && !strcmp(v, "onednn");
}

int cpu_gemm_onednn(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, gemm_env);
    return onednn;
}

/* OpenBLAS falls back to kernels without AVX2 on a CPU newer than it (Debian 12's 0.3.21 on
 * Sapphire Rapids and later: SSE3, SMALL training 4.4x slower: docs/results/speed.md,
 * "FP32 kernels"). The nmt program restarts itself with better ones (tools/blas_kernels.c); a program
 * linking the library cannot be restarted by it, so it is told, once, at its first product on
 * OpenBLAS. */
static void kernels_check(void)
{
    /* the sets with AVX2, as tools/blas_kernels.c's fixed_rule lists them */
    static const char *const fast[] = {"Haswell", "SkylakeX", "Cooperlake", "SapphireRapids", "Zen", NULL};
    const char *own = openblas_get_corename();
    for (int i = 0; own && fast[i]; i++)
        if (!strcmp(own, fast[i])) return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
    int avx512 = __builtin_cpu_supports("avx512f");
    nmt_log('W', "OpenBLAS runs its %s kernels on this CPU, which has AVX2%s: its products are several times slower "
                 "than they could be; start the program with OPENBLAS_CORETYPE=%s or NMT_GEMM=onednn (`nmt blas-kernels` "
                 "times them)", own ? own : "unknown", avx512 ? " and AVX-512" : "", avx512 ? "SkylakeX" : "Haswell");
}

void cpu_gemm(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
              real *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { /* an empty sum: only the beta scaling remains */
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) C[(long)i * ldc + j] = beta == 0 ? 0 : beta * C[(long)i * ldc + j];
        return;
    }
    static pthread_once_t checked = PTHREAD_ONCE_INIT;
#ifdef NMT_REAL_DOUBLE
    pthread_once(&checked, kernels_check);
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc);
#else
    if (cpu_gemm_onednn() && (beta == 0 || beta == 1) && !cpu_gemm_dnnl(ta, tb, M, N, K, A, lda, B, ldb, beta, C, ldc))
        return;
    pthread_once(&checked, kernels_check);
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
#endif
}

void cpu_colsum_add(real *C, const real *A, int M, int N, int lda)
{
    for (int i = 0; i < M; i++) {
        const real *a = A + (long)i * lda;
        for (int j = 0; j < N; j++) C[j] += a[j];
    }
}
