/* sgemm.c: the machine's single-precision matrix-product peak for `make bench`, measured through
 * the library's own BLAS seam (src/backend/cpu/blas.c, the OpenMP build of OpenBLAS it is linked against),
 * so that "share of the SGEMM peak" compares training with the BLAS training really uses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backend/cpu/blas.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int n = 2048, reps = 5;
    int threads[8] = {1, 2}, nt = 2;
    /* usage: sgemm [N [REPS [THREADS...]]] */
    if (argc > 1) n = atoi(argv[1]);
    if (argc > 2) reps = atoi(argv[2]);
    if (argc > 3) {
        nt = 0;
        for (int i = 3; i < argc && nt < 8; i++) threads[nt++] = atoi(argv[i]);
    }
    if (n < 1 || reps < 1) { fprintf(stderr, "usage: sgemm [N [REPS [THREADS...]]]\n"); return 2; }
    size_t nn = (size_t)n * n;
    real *A = malloc(sizeof(real) * nn), *B = malloc(sizeof(real) * nn), *C = malloc(sizeof(real) * nn);
    if (!A || !B || !C) { fprintf(stderr, "sgemm: out of memory\n"); return 1; }
    /* values in [-1, 1): denormals or zeros could make the product faster than real work */
    unsigned s = 12345;
    for (size_t i = 0; i < nn; i++) {
        s = s * 1103515245u + 12345u;
        A[i] = (real)((s >> 8) & 0xffff) / 32768 - 1;
        B[i] = (real)((s >> 4) & 0xffff) / 32768 - 1;
    }
    memset(C, 0, sizeof(real) * nn);
    printf("# sgemm %dx%d (2 n^3 FLOPs), best of %d after one warm-up call; %s\n", n, n, reps, openblas_get_config());
    double flops = 2.0 * n * n * n;
    for (int k = 0; k < nt; k++) {
        /* OpenBLAS's OpenMP build reads the OpenMP thread count at each call */
#ifdef _OPENMP
        omp_set_num_threads(threads[k]);
#endif
        openblas_set_num_threads(threads[k]);
        mm(TX, 0, 0, n, n, n, A, n, B, n, 0, C, n);
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            mm(TX, 0, 0, n, n, n, A, n, B, n, 0, C, n);
            double dt = now() - t0;
            if (dt < best) best = dt;
        }
        printf("SGEMM threads=%d gflops=%.1f best_s=%.4f\n", threads[k], flops / best / 1e9, best);
    }
    free(A);
    free(B);
    free(C);
    return 0;
}
