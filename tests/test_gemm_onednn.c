/* test_gemm_onednn.c: the FP32 products through oneDNN (NMT_GEMM=onednn, sgemm_dnnl.c) against a
 * double-precision reference written here: every transpose with beta 0 and 1 on odd sizes and
 * row strides, called through the backend table and directly (so that a silent fall back to
 * OpenBLAS shows), products made at once from the threads of a parallel loop (each thread its own
 * oneDNN objects), threads that come and go (their objects go with them), and the betas oneDNN
 * does not take, which go to OpenBLAS. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/cpu/cpu.h"
#include "base/err.h"
#include "base/rng.h"
#include "helpers.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static const backend_ops *bk;
static rng R;

typedef struct prod {
    int ta, tb, M, N, K, lda, ldb, ldc;
    real beta, *A, *B, *C, *C0;
} prod;

static void prod_make(prod *p, int ta, int tb, int M, int N, int K, real beta)
{
    *p = (prod){ta, tb, M, N, K, (ta ? M : K) + 3, (tb ? K : N) + 2, N + 5, beta, NULL, NULL, NULL, NULL};
    p->A = test_rnd(&R, (size_t)(ta ? K : M) * p->lda, -1, 1);
    p->B = test_rnd(&R, (size_t)(tb ? N : K) * p->ldb, -1, 1);
    p->C0 = test_rnd(&R, (size_t)M * p->ldc, -1, 1);
    p->C = malloc(sizeof(real) * M * p->ldc);
    NMT_ASSERT(p->C);
    memcpy(p->C, p->C0, sizeof(real) * M * p->ldc);
}

static void prod_free(prod *p)
{
    free(p->A); free(p->B); free(p->C); free(p->C0);
}

/* the largest error of C against the double reference, relative to the sum of |terms| of its
 * element (the FP32 sums' own scale); the padding past N must be as it was */
static double prod_err(const prod *p, int *pad_ok)
{
    double worst = 0;
    *pad_ok = 1;
    for (int i = 0; i < p->M; i++) {
        for (int j = 0; j < p->N; j++) {
            double s = 0, mag = fabs(p->beta * p->C0[i * p->ldc + j]);
            for (int k = 0; k < p->K; k++) {
                double a = p->ta ? p->A[k * p->lda + i] : p->A[i * p->lda + k];
                double b = p->tb ? p->B[j * p->ldb + k] : p->B[k * p->ldb + j];
                s += a * b;
                mag += fabs(a * b);
            }
            double want = s + p->beta * p->C0[i * p->ldc + j], e = fabs(p->C[i * p->ldc + j] - want) / (mag + 1e-30);
            if (!(e <= worst)) worst = e; /* a NaN is the worst */
        }
        for (int j = p->N; j < p->ldc; j++) *pad_ok &= p->C[i * p->ldc + j] == p->C0[i * p->ldc + j];
    }
    return worst;
}

static double run_table(prod *p)
{
    bk->gemm(p->ta, p->tb, p->M, p->N, p->K, p->A, p->lda, p->B, p->ldb, p->beta, p->C, p->ldc);
    int pad_ok;
    double e = prod_err(p, &pad_ok);
    return pad_ok ? e : 1;
}

static void test_shapes(void)
{
    static const int sz[][3] = {{19, 23, 37}, {1, 1, 1}, {80, 512, 256}, {3, 300, 1}, {257, 5, 1031}};
    for (size_t s = 0; s < sizeof sz / sizeof sz[0]; s++)
        for (int t = 0; t < 8; t++) {
            int ta = t >> 2, tb = t >> 1 & 1, b1 = t & 1;
            prod p;
            prod_make(&p, ta, tb, sz[s][0], sz[s][1], sz[s][2], (real)b1);
            double e = run_table(&p);
            CHECKF(e < 1e-5, "table: %dx%dx%d ta %d tb %d beta %d: error %g", p.M, p.N, p.K, ta, tb, b1, e);
            /* the same product straight to oneDNN: it must take it, not leave it to OpenBLAS */
            memcpy(p.C, p.C0, sizeof(real) * p.M * p.ldc);
            int rc = cpu_gemm_dnnl(ta, tb, p.M, p.N, p.K, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc), pad_ok;
            e = prod_err(&p, &pad_ok);
            CHECKF(rc == 0 && pad_ok && e < 1e-5, "oneDNN: %dx%dx%d ta %d tb %d beta %d: rc %d, error %g, padding %s",
                   p.M, p.N, p.K, ta, tb, b1, rc, e, pad_ok ? "kept" : "written");
            prod_free(&p);
        }
}

/* betas other than 0 and 1: oneDNN refuses them (nothing written) and the table's product is
 * OpenBLAS's, still right */
static void test_other_beta(void)
{
    prod p;
    prod_make(&p, 0, 1, 17, 29, 41, (real)0.5);
    int rc = cpu_gemm_dnnl(0, 1, p.M, p.N, p.K, p.A, p.lda, p.B, p.ldb, p.beta, p.C, p.ldc);
    CHECKF(rc == -1 && !memcmp(p.C, p.C0, sizeof(real) * p.M * p.ldc), "beta 0.5 to oneDNN: rc %d, C %s", rc,
           memcmp(p.C, p.C0, sizeof(real) * p.M * p.ldc) ? "written" : "untouched");
    double e = run_table(&p);
    CHECKF(e < 1e-5, "beta 0.5 through the table: error %g", e);
    prod_free(&p);
}

/* products made at once by the threads of a parallel loop, each on its own operands */
enum { NPAR = 12 };
static prod par[NPAR];
static double par_err[NPAR];

static void par_body(void *ctx, long lo, long hi, int thread)
{
    (void)ctx, (void)thread;
    for (long i = lo; i < hi; i++) par_err[i] = run_table(&par[i]);
}

static void test_threads(void)
{
    for (int i = 0; i < NPAR; i++) prod_make(&par[i], i & 1, i >> 1 & 1, 40 + i, 64 + 3 * i, 96 - i, (real)(i % 3 == 0));
    bk->parallel_for(NPAR, 1, 4, par_body, NULL);
    for (int i = 0; i < NPAR; i++) {
        CHECKF(par_err[i] < 1e-5, "parallel product %d: error %g", i, par_err[i]);
        prod_free(&par[i]);
    }
}

/* threads started one after another, each making one product: each thread's objects are freed
 * when it ends, so that a program starting a thread per request does not grow */
static void *one_product(void *arg)
{
    prod *p = arg;
    double *e = malloc(sizeof *e);
    NMT_ASSERT(e);
    *e = run_table(p);
    return e;
}

static void test_thread_churn(void)
{
    int before = cpu_gemm_dnnl_live(), grew = 0;
    for (int i = 0; i < 6; i++) {
        prod p;
        prod_make(&p, i & 1, 0, 33, 47, 65, (real)(i & 1));
        pthread_t t;
        void *e = NULL;
        int rc = pthread_create(&t, NULL, one_product, &p);
        if (!rc) rc = pthread_join(t, &e);
        CHECKF(!rc && e && *(double *)e < 1e-5, "product on thread %d: rc %d, error %g", i, rc, e ? *(double *)e : -1.0);
        free(e);
        prod_free(&p);
        if (cpu_gemm_dnnl_live() > before) grew++;
    }
    CHECKF(grew == 0 && cpu_gemm_dnnl_live() == before, "threads that ended still hold oneDNN objects: %d live, %d before",
           cpu_gemm_dnnl_live(), before);
    CHECK(before >= 1); /* this thread's, from the products above */
}

int main(void)
{
    setenv("NMT_GEMM", "onednn", 1); /* before the first product: blas.c reads it once */
    bk = TX->b;
    rng_seed(&R, 77);
    bk->set_threads(4);
    CHECKF(cpu_gemm_onednn() == 1, "NMT_GEMM=onednn was not taken");
    test_shapes();
    test_other_beta();
    test_threads();
    test_thread_churn();
    return test_done("test_gemm_onednn");
}
