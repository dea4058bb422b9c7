/* test_cuda_host.c: the CUDA backend's host side on the emulation's second device (tests/cudasim,
 * run with NMT_DEVICE=cuda:1): a new thread's first allocation lands on the chosen device; a
 * thread that ends makes no CUDA or cuBLAS call from its exit destructors (the emulated cuBLAS
 * tears its own state down first and stops a later call); out of device memory for the gradient
 * norm's scratch is a NaN norm (which training reports), not an abort. And the stream order the
 * emulation makes visible: a copy larger than the pinned staging (its slots reused only after
 * their copies ran), a parallel loop whose threads' kernels are done when it returns. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "backend/backend.h"
#include "base/err.h"
#include "test.h"
#include "device.h"

enum { N = 1000, BIG = 4 << 16 };

/* on a new thread: copies in, a kernel, a product, copies out, the norm, against the host's */
static void *work(void *arg)
{
    const backend_ops *k = bk_ctx_default()->b;
    int *good = arg;
    static real h[N], back[N], dot;
    for (int i = 0; i < N; i++) h[i] = (real)(i % 7) * 0.5f;
    real *d = k->alloc(sizeof h), *c = k->alloc(sizeof(real));
    if (!d || !c) return NULL;
    k->copy_in(d, h, sizeof h);
    k->add_rows(d, N, d, N, d, N, 1, N);
    k->gemm(0, 1, 1, 1, N, d, N, d, N, 0, c, 1);
    k->copy_out(back, d, sizeof back);
    k->copy_out(&dot, c, sizeof dot);
    double s = k->sumsq(d, N), want = 0;
    for (int i = 0; i < N; i++) want += 4.0 * h[i] * h[i];
    *good = fabs(s - want) < 1e-9 * want && fabs(dot - want) < 1e-5 * want;
    for (int i = 0; i < N; i++) *good &= back[i] == 2 * h[i];
    k->free(d);
    k->free(c);
    return NULL;
}

/* on a new thread: the norm of BIG elements with device memory exhausted, then with it back */
static void *starved(void *arg)
{
    const backend_ops *k = bk_ctx_default()->b;
    double *s = arg;
    real *d = k->alloc(sizeof(real) * BIG);
    if (!d) return NULL;
    k->zero_rows(d, BIG, 1, BIG);
    setenv("NMT_CUDASIM_MEM_LIMIT", "1", 1); /* every further cudaMalloc fails */
    s[0] = k->sumsq(d, BIG);
    unsetenv("NMT_CUDASIM_MEM_LIMIT");
    s[1] = k->sumsq(d, BIG);
    k->free(d);
    return NULL;
}

/* 20 MB in and out through the 4 MiB staging slots */
static void big_copy(void)
{
    const backend_ops *k = bk_ctx_default()->b;
    size_t n = 5 << 20;
    real *h = malloc(sizeof(real) * n), *back = malloc(sizeof(real) * n), *d = k->alloc(sizeof(real) * n);
    NMT_ASSERT(h && back && d);
    for (size_t i = 0; i < n; i++) h[i] = (real)i;
    k->copy_in(d, h, sizeof(real) * n);
    k->copy_out(back, d, sizeof(real) * n);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += back[i] != h[i];
    CHECKF(!bad, "a copy of %zu floats through the staging: %zu differ", n, bad);
    k->free(d);
    free(h);
    free(back);
}

static atomic_int seen; /* bit t: the loop's thread t has taken a slice */

static void double_slice(void *ctx, long lo, long hi, int thread)
{
    /* a missing wait shows only on the other thread's stream, and on a busy machine the caller
     * could take every slice before that thread starts: each waits (2 s at most) for the other */
    atomic_fetch_or(&seen, 1 << (thread & 1));
    for (int i = 0; i < 2000 && atomic_load(&seen) != 3; i++) nanosleep(&(struct timespec){0, 1000000}, NULL);
    real *d = (real *)ctx + lo;
    bk_ctx_default()->b->add_rows(d, (int)(hi - lo), d, (int)(hi - lo), d, (int)(hi - lo), 1, (int)(hi - lo));
}

/* each thread of the loop doubles its slices on its own stream; all done when the loop returns */
static void loop_order(void)
{
    const backend_ops *k = bk_ctx_default()->b;
    enum { M = 4096 };
    static real h[M], back[M];
    for (int i = 0; i < M; i++) h[i] = (real)i;
    real *d = k->alloc(sizeof h);
    NMT_ASSERT(d);
    k->copy_in(d, h, sizeof h);
    atomic_store(&seen, 0);
    k->parallel_for(M, 256, 2, double_slice, d);
    k->copy_out(back, d, sizeof back);
    int bad = 0;
    for (int i = 0; i < M; i++) bad += back[i] != 2 * h[i];
    CHECKF(!bad, "after a parallel loop on two threads: %d of %d elements not doubled", bad, M);
    k->free(d);
}

int main(void)
{
    if (test_device_missing("test_cuda_host")) return test_done("test_cuda_host");
    for (int round = 0; round < 3; round++) { /* threads that start, work and end, one after another */
        pthread_t t;
        int good = 0;
        CHECK(pthread_create(&t, NULL, work, &good) == 0);
        pthread_join(t, NULL);
        CHECKF(good, "thread %d: results differ from the host's", round);
    }
    double s[2] = {0, -1};
    pthread_t t;
    CHECK(pthread_create(&t, NULL, starved, s) == 0);
    pthread_join(t, NULL);
    CHECKF(isnan(s[0]), "the norm without memory for its scratch: %g, not NaN", s[0]);
    CHECKF(s[1] == 0, "the norm once memory is back: %g", s[1]);
    big_copy();
    loop_order();
    return test_done("test_cuda_host");
}
