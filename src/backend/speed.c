/* speed.c: how fast the current backend's matrix product runs the model's own shapes, on one
 * thread: what a program compares when it chooses between BLAS kernels by measurement (the
 * `nmt` program's choice of OpenBLAS's kernels, tools/blas_kernels.c). */
#include <math.h>
#include <time.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nmt.h"

/* C[M,N] = op(A)·op(B): SMALL's and PAPER's products (docs/results/speed.md, "Products by library"),
 * rows as in training (batch 80, 15 target words) and beam-12 decoding (64 sentences; PAPER's
 * output layer over 128 hypotheses, which keeps the whole set near 30 GFLOP). */
static const struct {
    int ta, tb, M, N, K;
} shapes[] = {
    {0, 0, 80, 512, 256},     /* SMALL step U_z|U_r */
    {0, 0, 80, 256, 256},     /* SMALL step U_h */
    {0, 0, 1200, 768, 256},   /* SMALL input projection */
    {0, 0, 1000, 10000, 256}, /* SMALL output layer forward */
    {0, 1, 1000, 256, 10000}, /* SMALL output layer backward, data */
    {1, 0, 256, 10000, 1000}, /* SMALL output layer backward, weights */
    {0, 0, 768, 10000, 256},  /* SMALL decoding output layer */
    {0, 0, 768, 512, 256},    /* SMALL decoding U_z|U_r */
    {0, 0, 80, 2000, 1000},   /* PAPER step U_z|U_r */
    {0, 0, 1200, 3000, 620},  /* PAPER input projection */
    {0, 0, 128, 30002, 500},  /* PAPER decoding output layer */
};
enum { NSHAPE = sizeof shapes / sizeof shapes[0] };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the best GFLOP/s of shape s's calls within `seconds` (at least one) */
static double time_shape(int s, real *A, real *B, real *C, double seconds)
{
    int ta = shapes[s].ta, tb = shapes[s].tb, M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
    double best = INFINITY, t_end = now() + seconds;
    for (int calls = 0; calls < 1 || now() < t_end; calls++) {
        double t0 = now();
        mm(bk_ctx_cpu(), ta, tb, M, N, K, A, ta ? M : K, B, tb ? K : N, 0, C, N);
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    return 2.0 * M * N * K / (best > 1e-9 ? best : 1e-9) * 1e-9;
}

int nmt_blas_speed(double seconds, double *gflops, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_blas_speed", gflops);
    if (bad) return bad;
    *gflops = 0;
    if (!(seconds >= 0 && seconds <= 60)) return nmt_fail(err, NMT_ERR_ARG, "BLAS timing: %g s out of range [0, 60]", seconds);
    size_t a = 0, b = 0, c = 0; /* the largest operand of each role */
    for (int s = 0; s < NSHAPE; s++) {
        size_t M = shapes[s].M, N = shapes[s].N, K = shapes[s].K;
        if (M * K > a) a = M * K;
        if (K * N > b) b = K * N;
        if (M * N > c) c = M * N;
    }
    const backend_ops *bk = backend_cpu(); /* the host's BLAS, whose buffers the host fills */
    real *A = bk->alloc(a * sizeof(real)), *B = bk->alloc(b * sizeof(real)), *C = bk->alloc(c * sizeof(real));
    int rc = A && B && C ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "BLAS timing: out of memory");
    if (!rc) {
        /* values away from zero and denormals, the same on every run */
        for (size_t i = 0; i < a; i++) A[i] = (real)(0.5 + (double)(i % 7) / 8);
        for (size_t i = 0; i < b; i++) B[i] = (real)(0.25 - (double)(i % 5) / 16);
        for (size_t i = 0; i < c; i++) C[i] = 0; /* its pages mapped before any timing */
        int threads = bk->threads();
        bk->set_threads(1);
        time_shape(2, A, B, C, 0); /* OpenBLAS's first call sets up its buffers */
        double log_sum = 0;
        for (int s = 0; s < NSHAPE; s++) log_sum += log(time_shape(s, A, B, C, seconds / NSHAPE));
        bk->set_threads(threads);
        *gflops = exp(log_sum / NSHAPE);
    }
    bk->free(A);
    bk->free(B);
    bk->free(C);
    return rc;
}
