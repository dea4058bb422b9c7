// cuda.cu: the CUDA backend's table and what is not a kernel: opening the device, memory (device
// blocks; copies through pinned staging), host threads (one stream, cuBLAS handle and scratch
// each) and the matrix products (cuBLAS, loaded when the device is opened). Kernels: rows.cu,
// rnn.cu, output.cu, update.cu, topk.cu, transformer.cu.
#include <cublas_v2.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda.h"
#include "backend/cuda/cuda_int.h"

static int device; // the one cuda_backend_open chose

// ---- cuBLAS, by dlopen: a program that never names --device cuda neither loads nor needs it
// (libcublasLt alone is over 500 MB), and its absence is a clear error, not a failed start ----
static struct {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasSgemm_v2) sgemm;
} blas;

static const char *blas_load(void)
{
    void *h = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return dlerror();
    blas.create = (decltype(blas.create))dlsym(h, "cublasCreate_v2");
    blas.destroy = (decltype(blas.destroy))dlsym(h, "cublasDestroy_v2");
    blas.set_stream = (decltype(blas.set_stream))dlsym(h, "cublasSetStream_v2");
    blas.sgemm = (decltype(blas.sgemm))dlsym(h, "cublasSgemm_v2");
    return blas.create && blas.destroy && blas.set_stream && blas.sgemm ? NULL : "libcublas.so.13 lacks a function";
}

// ---- each host thread's stream, handle, pinned staging and device scratch ----
static const size_t STAGE = 4 << 20; // bytes per staging slot: copies go through in pieces of this size

typedef struct cu_thread {
    cudaStream_t s;
    cudaStream_t fill; // zero fills of new blocks: waited for alone, not behind the kernels on s
    cublasHandle_t h;
    char *stage[2];        // pinned host memory, two slots so that one fills while one copies
    cudaEvent_t done[2];   // the last copy out of each slot
    int slot;
    void *scratch;
    size_t scratch_bytes;
    struct cu_thread *next; // in the list of idle contexts
} cu_thread;

static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

[[noreturn]] void cu_fatal(const char *op, cudaError_t e)
{
    fprintf(stderr, "nmt: cuda: %s: %s\n", op, cudaGetErrorString(e));
    abort();
}

static const char *blas_status(cublasStatus_t st)
{
    switch (st) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "an unknown cuBLAS status";
    }
}

// a cuBLAS failure, by cuBLAS's own status (and the runtime's last error, where it has one)
[[noreturn]] static void blas_fatal(const char *op, cublasStatus_t st)
{
    cudaError_t e = cudaGetLastError();
    fprintf(stderr, "nmt: cuda: %s: %s (status %d)%s%s\n", op, blas_status(st), (int)st,
            e != cudaSuccess ? "; the runtime's last error: " : "", e != cudaSuccess ? cudaGetErrorString(e) : "");
    abort();
}

static void ok(const char *op, cudaError_t e)
{
    if (e != cudaSuccess) cu_fatal(op, e);
}

// contexts of threads that have ended, handed to the next new thread
static cu_thread *idle;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;

// A thread's exit: its context waits for the next new thread, with its stream's queued work, which
// runs on in order. No CUDA or cuBLAS call here: the order of thread-exit destructors against
// the runtime's and cuBLAS's own teardown of the thread is unspecified
static void thread_end(void *p)
{
    cu_thread *t = (cu_thread *)p;
    pthread_mutex_lock(&idle_lock);
    t->next = idle;
    idle = t;
    pthread_mutex_unlock(&idle_lock);
}

static cu_thread *idle_take(void)
{
    pthread_mutex_lock(&idle_lock);
    cu_thread *t = idle;
    if (t) idle = t->next;
    pthread_mutex_unlock(&idle_lock);
    return t;
}

static void key_make(void) { pthread_key_create(&key, thread_end); }

static cu_thread *here(void)
{
    static thread_local cu_thread *mine;
    if (mine) return mine;
    pthread_once(&key_once, key_make);
    ok("cudaSetDevice", cudaSetDevice(device)); // a new thread starts on device 0
    cu_thread *t = idle_take();
    if (t) {
        pthread_setspecific(key, t);
        return mine = t;
    }
    t = (cu_thread *)calloc(1, sizeof *t);
    if (!t) cu_fatal("a thread's context", cudaErrorMemoryAllocation);
    ok("cudaStreamCreate", cudaStreamCreateWithFlags(&t->s, cudaStreamNonBlocking));
    ok("cudaStreamCreate", cudaStreamCreateWithFlags(&t->fill, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
        ok("cudaHostAlloc", cudaHostAlloc((void **)&t->stage[i], STAGE, cudaHostAllocDefault));
        ok("cudaEventCreate", cudaEventCreateWithFlags(&t->done[i], cudaEventDisableTiming));
    }
    cublasStatus_t st = blas.create(&t->h);
    if (st != CUBLAS_STATUS_SUCCESS) blas_fatal("cublasCreate", st);
    if ((st = blas.set_stream(t->h, t->s)) != CUBLAS_STATUS_SUCCESS) blas_fatal("cublasSetStream", st);
    pthread_setspecific(key, t);
    return mine = t;
}

cudaStream_t cu_stream(void) { return here()->s; }

void *cu_scratch(size_t bytes)
{
    cu_thread *t = here();
    if (bytes <= t->scratch_bytes) return t->scratch;
    ok("scratch", cudaStreamSynchronize(t->s)); // the old block may still be read
    cudaFree(t->scratch);
    t->scratch = NULL;
    t->scratch_bytes = 0;
    size_t want = bytes + bytes / 2;
    if (cudaMalloc(&t->scratch, want) != cudaSuccess) { // the caller's error, as alloc's NULL is
        cudaGetLastError();
        t->scratch = NULL;
        fprintf(stderr, "nmt: cuda: scratch: out of device memory (%zu bytes)\n", want);
        return NULL;
    }
    t->scratch_bytes = want;
    return t->scratch;
}

// ---- memory ----

static void *c_alloc(size_t bytes)
{
    // the thread's context first: it selects the device, which a new thread's cudaMalloc would
    // otherwise take as device 0 (a serve worker's first call is an allocation)
    cudaStream_t s = here()->fill;
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError(); // out of memory is the caller's error to report, not a sticky one
        return NULL;
    }
    // zero-filled, and done before any other thread's stream can be handed the block; on a stream
    // of its own, so that the wait is for the fill only, not for the kernels queued on the
    // thread's stream (the block is new: none of them can use it)
    ok("alloc: zero fill", cudaMemsetAsync(p, 0, bytes, s));
    ok("alloc: zero fill", cudaStreamSynchronize(s));
    return p;
}

static void c_free(void *p)
{
    if (p) ok("free", cudaFree(p)); // waits for the device, so no kernel still reads it
}

// host -> pinned slot -> device, one slot filling while the other copies. Done on return, as a
// copy from pageable memory would be: another thread's stream may read dst next (parameters
// loaded on one thread, decoded on others), and the one before it was waiting on a copy out anyway
static void c_copy_in(void *dst, const void *host, size_t bytes)
{
    cu_thread *t = here();
    int k = t->slot;
    for (size_t off = 0; off < bytes; off += STAGE) {
        size_t n = bytes - off < STAGE ? bytes - off : STAGE;
        k = t->slot;
        t->slot ^= 1;
        ok("copy_in", cudaEventSynchronize(t->done[k])); // the slot's previous copy has left it
        memcpy(t->stage[k], (const char *)host + off, n);
        ok("copy_in", cudaMemcpyAsync((char *)dst + off, t->stage[k], n, cudaMemcpyHostToDevice, t->s));
        ok("copy_in", cudaEventRecord(t->done[k], t->s));
    }
    if (bytes) ok("copy_in (or a kernel before it)", cudaEventSynchronize(t->done[k]));
}

// device -> pinned slot -> host: waits for every kernel before it on this thread's stream, which
// is where a fault in one of them shows
void cu_copy_out(void *host, const void *src, size_t bytes)
{
    cu_thread *t = here();
    for (size_t off = 0; off < bytes; off += STAGE) {
        size_t n = bytes - off < STAGE ? bytes - off : STAGE;
        ok("copy_out", cudaMemcpyAsync(t->stage[0], (const char *)src + off, n, cudaMemcpyDeviceToHost, t->s));
        ok("copy_out (or a kernel before it)", cudaStreamSynchronize(t->s));
        memcpy((char *)host + off, t->stage[0], n);
    }
}

// ---- host threads: the CPU's pool; each thread queues on its own stream, so a loop waits for
// the caller's work before it starts and for each chunk's before it ends ----

typedef struct pf_job { bk_body body; void *ctx; } pf_job;

static void pf_chunk(void *ctx, long lo, long hi, int thread)
{
    pf_job *j = (pf_job *)ctx;
    j->body(j->ctx, lo, hi, thread);
    ok("parallel_for", cudaStreamSynchronize(cu_stream()));
}

static void c_parallel_for(long n, long grain, int nthreads, bk_body body, void *ctx)
{
    ok("parallel_for", cudaStreamSynchronize(cu_stream()));
    pf_job j = {body, ctx};
    backend_cpu()->parallel_for(n, grain, nthreads, pf_chunk, &j);
}

static void c_set_threads(int n) { backend_cpu()->set_threads(n); }
static int c_threads(void) { return backend_cpu()->threads(); }

// ---- products: row-major C = op(A) op(B) + beta C is column-major C^T = op(B)^T op(A)^T, so
// cuBLAS gets B first; FP32 throughout (the default math mode: no TF32) ----

static void c_gemm(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                   real *C, int ldc)
{
    if (M <= 0 || N <= 0) return;
    if (K <= 0) { // an empty sum: only the beta scaling remains
        cu_scale_rows(C, ldc, M, N, beta);
        return;
    }
    const float one = 1;
    cublasStatus_t st = blas.sgemm(here()->h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                                   &one, B, ldb, A, lda, &beta, C, ldc);
    if (st != CUBLAS_STATUS_SUCCESS) blas_fatal("gemm (cublasSgemm)", st);
}

static const backend_ops cuda_backend = {
    .name = "cuda",
    .alloc = c_alloc,
    .free = c_free,
    .copy_in = c_copy_in,
    .copy_out = cu_copy_out,
    .set_threads = c_set_threads,
    .threads = c_threads,
    .parallel_for = c_parallel_for,
    .gemm = c_gemm,
    .gemm_rows = nullptr, // cuBLAS decides its own order: not promised (docs/CUDA.md)
    .colsum_add = cu_colsum_add,
    .vexp = cu_vexp,
    .zero_rows = cu_zero_rows,
    .copy_rows = cu_copy_rows,
    .act_rows = cu_act_rows,
    .act_grad_rows = cu_act_grad_rows,
    .add_rows = cu_add_rows,
    .mul_rows = cu_mul_rows,
    .axpy_diff_rows = cu_axpy_diff_rows,
    .dist_rows = cu_dist_rows,
    .gru_gates = cu_gru_gates,
    .gru_state = cu_gru_state,
    .gru_grad_state = cu_gru_grad_state,
    .gru_grad_reset = cu_gru_grad_reset,
    .attn_forward = cu_attn_forward,
    .attn_backward = cu_attn_backward,
    .attn_window = cu_attn_window,
    .attn_window_backward = cu_attn_window_backward,
    .layer_norm = cu_layer_norm,
    .layer_norm_backward = cu_layer_norm_backward,
    .attn_softmax = cu_attn_softmax,
    .attn_softmax_backward = cu_attn_softmax_backward,
    .gemm_batched = cu_gemm_batched,
    .act_grad_x_rows = cu_act_grad_x_rows,
    .dropout_mask = cu_dropout_mask,
    .gather_rows_ld = cu_gather_rows_ld,
    .repeat_row = cu_repeat_row,
    .maxout = cu_maxout,
    .maxout_backward = cu_maxout_backward,
    .softmax_nll = cu_softmax_nll,
    .softmax_nll_backward = cu_softmax_nll_backward,
    .gather_rows = cu_gather_rows,
    .scatter_add_rows = cu_scatter_add_rows,
    .scatter_rows = cu_scatter_rows,
    .gather_cols = cu_gather_cols,
    .sumsq = cu_sumsq,
    .update = cu_update,
    .update_rows = cu_update_rows,
    .settle_rows = cu_settle_rows,
    .topk_rows = cu_topk_rows,
    .logp_acc_rows = cu_logp_acc_rows,
    .lowp = NULL, // int8 / bf16 decoding and bf16 training: not on this backend yet
    .mix = NULL,
    .mark = NULL,
};

extern "C" const backend_ops *cuda_backend_open(int dev, char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "no CUDA device: %s", cudaGetErrorString(e));
        return NULL;
    }
    if (dev < 0 || dev >= n) {
        snprintf(why, whylen, "no CUDA device: device %d asked for, %d present", dev, n);
        return NULL;
    }
    if ((e = cudaSetDevice(dev)) != cudaSuccess || (e = cudaFree(0)) != cudaSuccess) { // makes the context
        snprintf(why, whylen, "no CUDA device: device %d: %s", dev, cudaGetErrorString(e));
        return NULL;
    }
    const char *b = blas.sgemm ? NULL : blas_load();
    if (b) {
        snprintf(why, whylen, "no CUDA device: cuBLAS: %s", b);
        return NULL;
    }
    device = dev;
    return &cuda_backend;
}
