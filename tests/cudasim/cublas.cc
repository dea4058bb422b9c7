// cublas.cc: the CUDA emulation's stand-in for libcublas.so.13 (the four functions the backend
// opens): handles bound to the device current at their creation, cuBLAS's argument checks on
// cublasSgemm, and the product by a reference column-major SGEMM (double sums) queued on the
// handle's stream. NMT_CUDASIM_CUBLAS_FAIL=N makes the N-th product fail (execution failed).
#include <pthread.h>
#include <stdlib.h>

#include <atomic>
#include <vector>

#include <cublas_v2.h>

#include "simint.h"

struct cublasContext {
    int device;
    cudaStream_t s;
};

// A thread's cuBLAS state is torn down by a thread-exit destructor of cuBLAS's own, whose order
// against other libraries' destructors is unspecified: here its key is made at load, so it runs
// before those of keys made later, and any cuBLAS call after it on that thread is stopped
static pthread_key_t teardown_key;
static thread_local bool torn_down;
static void teardown(void *) { torn_down = true; }
__attribute__((constructor)) static void teardown_make(void) { pthread_key_create(&teardown_key, teardown); }
static void alive(const char *fn)
{
    if (torn_down)
        sim_die("%s on a thread whose cuBLAS state was torn down at its exit (a thread-exit destructor?)", fn);
    pthread_setspecific(teardown_key, (void *)1);
}

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *h)
{
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    alive("cublasCreate");
    *h = new cublasContext{sim_current_device(), NULL};
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    alive("cublasDestroy");
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    alive("cublasSetStream");
    h->s = s;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusString(cublasStatus_t st)
{
    switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

} // extern "C"

static bool op_ok(cublasOperation_t t) { return t == CUBLAS_OP_N || t == CUBLAS_OP_T || t == CUBLAS_OP_C; }
static int imax1(int a) { return a > 1 ? a : 1; }

// a rows x cols column-major operand with leading dimension ld: the handle's device's, all inside
static void check_operand(const cublasContext *h, char which, const float *p, int rows, int cols, int ld)
{
    bool inside = false;
    size_t bytes = sizeof(float) * ((size_t)(cols - 1) * ld + rows);
    int d = sim_device_of(p, bytes, &inside);
    if (d < 0) sim_die("cublasSgemm: %c (%p) is not device memory", which, (const void *)p);
    if (d != h->device) sim_die("cublasSgemm: %c is memory of device %d, the handle's is %d", which, d, h->device);
    if (!inside) sim_die("cublasSgemm: %c, %d x %d with ld %d, runs past the end of its block", which, rows, cols, ld);
}

// C = alpha op(A) op(B) + beta C, column-major, each entry one double sum in the order of l;
// beta 0 does not read C. op(A)'s rows and op(B)'s columns are gathered first, so that each sum
// runs over contiguous memory
static void sgemm_ref(bool ta, bool tb, int m, int n, int k, float alpha, const float *A, int lda, const float *B,
                      int ldb, float beta, float *C, int ldc)
{
    std::vector<double> a((size_t)m * k), b((size_t)n * k);
    for (int i = 0; i < m; i++)
        for (int l = 0; l < k; l++) a[(size_t)i * k + l] = ta ? A[l + (long)i * lda] : A[i + (long)l * lda];
    for (int j = 0; j < n; j++)
        for (int l = 0; l < k; l++) b[(size_t)j * k + l] = tb ? B[j + (long)l * ldb] : B[l + (long)j * ldb];
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            const double *x = &a[(size_t)i * k], *y = &b[(size_t)j * k];
            double s = 0;
            for (int l = 0; l < k; l++) s += x[l] * y[l];
            float *c = &C[i + (long)j * ldc];
            *c = beta == 0 ? (float)(alpha * s) : (float)(alpha * s) + beta * *c;
        }
}

static bool injected_failure(void)
{
    static std::atomic<long> calls{0};
    const char *f = getenv("NMT_CUDASIM_CUBLAS_FAIL");
    return f && ++calls == atol(f);
}

extern "C" cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, const float *B, int ldb,
                                         const float *beta, float *C, int ldc)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    alive("cublasSgemm");
    bool tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
    if (!op_ok(ta) || !op_ok(tb) || m < 0 || n < 0 || k < 0 || !alpha || !beta || lda < imax1(tA ? k : m) ||
        ldb < imax1(tB ? n : k) || ldc < imax1(m))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!m || !n) return CUBLAS_STATUS_SUCCESS;
    if (sim_stream_device(h->s) != h->device)
        sim_die("cublasSgemm: the handle's stream is of device %d, the handle of device %d", sim_stream_device(h->s),
                h->device);
    if (injected_failure()) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (k) {
        check_operand(h, 'A', A, tA ? k : m, tA ? m : k, lda);
        check_operand(h, 'B', B, tB ? n : k, tB ? k : n, ldb);
    }
    check_operand(h, 'C', C, m, n, ldc);
    float al = *alpha, be = *beta; // host pointer mode: read at the call
    sim_enqueue(h->s, [=] { sgemm_ref(tA, tB, m, n, k, al, A, lda, B, ldb, be, C, ldc); });
    return CUBLAS_STATUS_SUCCESS;
}
