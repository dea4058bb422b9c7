// cuda_int.h: what the CUDA backend's files share (CUDA C++, never included by C): each host
// thread's stream, cuBLAS handle and scratch, the launch check, grid sizes, block reductions, and
// the kernels' host entry points that cuda.cu puts in the table.
#ifndef NMT_CUDA_INT_H
#define NMT_CUDA_INT_H

#include <cuda_runtime.h>

#include "backend/backend.h"

static_assert(sizeof(real) == sizeof(float), "the CUDA backend is FP32 (real is float)");

// ---- per host thread (cuda.cu) ----
cudaStream_t cu_stream(void);              // this thread's stream, made at its first use
// device scratch of this thread, at least bytes, grown (never shrunk) when too small; valid
// until the next call of this thread. NULL when the device has no memory for it (said on stderr)
void *cu_scratch(size_t bytes);
// a CUDA failure no caller can recover from (a kernel fault, a lost device): says which op,
// then aborts, as the simulated device does with a violated seam
[[noreturn]] void cu_fatal(const char *op, cudaError_t e);
// after each launch: a bad configuration shows here, a fault in the kernel at the next copy out
static inline void cu_check(const char *op)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) cu_fatal(op, e);
}
void cu_copy_out(void *host, const void *src, size_t bytes);

// ---- grids ----
enum { CU_THREADS = 256 };
// blocks for n elements, CU_THREADS each, capped: the grid-stride loops cover the rest
static inline unsigned cu_blocks(long n)
{
    long b = (n + CU_THREADS - 1) / CU_THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535L * 16 ? 65535L * 16 : b);
}

// f(r, k) for every element of R rows of cols, one thread each (grid-stride). Below 2^31
// elements the row and column come from a 32-bit division (a few instructions; a 64-bit one is a
// long call per element); i + stride stays below 2^32 there
template <class F> __global__ void cu_rows_kernel(int R, int cols, F f)
{
    long n = (long)R * cols;
    if (n <= 0x7fffffffL) {
        unsigned c = (unsigned)cols, m = (unsigned)n;
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
            f((int)(i / c), (int)(i % c));
        return;
    }
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        f((int)(i / cols), (int)(i % cols));
}
template <class F> static inline void cu_rows(const char *op, int R, int cols, F f)
{
    if (R <= 0 || cols <= 0) return;
    cu_rows_kernel<<<cu_blocks((long)R * cols), CU_THREADS, 0, cu_stream()>>>(R, cols, f);
    cu_check(op);
}

// ---- block reductions: every thread gets the result; a fixed tree, so the same bits each run.
// sh: 32 values of shared memory; blockDim a multiple of 32 ----
__device__ static inline float cu_warp_max(float x)
{
    for (int o = 16; o; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}
template <class T> __device__ static inline T cu_warp_sum(T x)
{
    for (int o = 16; o; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}
__device__ static inline float cu_block_max(float x, float *sh)
{
    int w = threadIdx.x / 32, l = threadIdx.x % 32, nw = blockDim.x / 32;
    x = cu_warp_max(x);
    __syncthreads(); // sh may still be read by a previous reduction
    if (!l) sh[w] = x;
    __syncthreads();
    x = l < nw ? sh[l] : -INFINITY;
    return cu_warp_max(x);
}
template <class T> __device__ static inline T cu_block_sum(T x, T *sh)
{
    int w = threadIdx.x / 32, l = threadIdx.x % 32, nw = blockDim.x / 32;
    x = cu_warp_sum(x);
    __syncthreads();
    if (!l) sh[w] = x;
    __syncthreads();
    x = l < nw ? sh[l] : (T)0;
    return cu_warp_sum(x);
}
__device__ static inline float cu_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
// the activations of act_rows (enum bk_fn) and their derivatives from the input, in the CPU's
// expressions and order of operations (src/backend/cpu/rows.c, transformer.c); gelu is the tanh form
static constexpr float CU_GELU_C = 0.7978845608028654f; // √(2/π)
__device__ static inline float cu_act(int f, float x)
{
    switch (f) {
    case BK_TANH: return tanhf(x);
    case BK_SIGMOID: return cu_sigmoid(x);
    case BK_RELU: return x > 0 ? x : 0;
    case BK_GELU: return 0.5f * x * (1 + tanhf(CU_GELU_C * (x + 0.044715f * x * x * x)));
    case BK_SWISH: return x * cu_sigmoid(x);
    default: return x;
    }
}
// gelu's derivative: the CPU's expression, in its order of operations
__device__ static inline float cu_gelu_grad(float x)
{
    float t = tanhf(CU_GELU_C * (x + 0.044715f * x * x * x));
    return 0.5f * (1 + t) + 0.5f * x * (1 - t * t) * CU_GELU_C * (1 + 3 * 0.044715f * x * x);
}
__device__ static inline float cu_act_grad_x(int f, float x)
{
    if (f == BK_GELU) return cu_gelu_grad(x);
    if (f == BK_RELU) return x > 0 ? 1 : 0;
    if (f == BK_TANH) return 1 - tanhf(x) * tanhf(x);
    if (f != BK_SWISH && f != BK_SIGMOID) return 1; // identity
    float s = cu_sigmoid(x);
    return f == BK_SWISH ? s + x * s * (1 - s) : s * (1 - s);
}

// ---- the kernels (backend.h has their contracts) ----
// rows.cu
void cu_colsum_add(real *C, const real *A, int M, int N, int lda);
void cu_scale_rows(real *C, int ldc, int M, int N, real beta);
void cu_vexp(real *y, const real *x, int n);
void cu_zero_rows(real *y, int ldy, int R, int cols);
void cu_copy_rows(real *y, int ldy, const real *x, int ldx, int R, int cols);
void cu_act_rows(int f, real *y, int ldy, const real *x, int ldx, const real *b, int R, int cols);
void cu_act_grad_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R, int cols);
void cu_add_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols);
void cu_mul_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols);
void cu_axpy_diff_rows(real *y, int ldy, const real *u, const real *x, int ldx, const real *z, int ldz, int R,
                       int cols);
void cu_dist_rows(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols);
// rnn.cu
void cu_gru_gates(real *z, real *r, real *rh, const real *a, int lda, const real *zr, const real *hp, int ldhp, int B,
                  int n);
void cu_gru_state(real *h, int ldh, real *hc, const real *z, const real *a, int lda, const real *uq, const real *hp,
                  int ldhp, const unsigned char *mask, int B, int n);
void cu_gru_grad_state(real *da, int ldda, real *dhp, const real *g, const real *z, const real *hc, const real *hp,
                       int ldhp, const unsigned char *mask, int B, int n);
void cu_gru_grad_reset(real *da, int ldda, real *dhp, const real *dq, const real *r, const real *hp, int ldhp,
                       const unsigned char *mask, int B, int n);
void cu_attn_forward(real *alpha, real *ctx, const real *UaH, const real *q, const real *v, const real *H,
                     const int *xlen, const int *src, const bk_attn *a);
void cu_attn_backward(real *dq, real *dUaH, real *dH, real *dv_rows, const real *dctx, const real *dalpha,
                      const real *alpha, const real *UaH, const real *q, const real *v, const real *H, const int *xlen,
                      const bk_attn *a, real *tmp);
void cu_attn_window(real *xi, const real *src, int ld, const int *len, int H, int Tx, int k);
void cu_attn_window_backward(real *dsrc, const real *dxi, const int *len, int B, int Tx, int k);
// output.cu
void cu_repeat_row(real *Z, const real *row, int H, int V);
void cu_maxout(real *t, unsigned char *which, const real *tt, const real *b, const int *rows, int N, int l);
void cu_maxout_backward(real *dtt, const real *dt, const unsigned char *which, const int *rows, int N, int l);
void cu_softmax_nll(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y, int N, int V,
                    double ls);
void cu_softmax_nll_backward(real *z, real *dbias, real *part, const double *rinv, const int *rows, const int *y,
                             int N, int V, real scale, real ls, int blk, uint16_t *z16);
void cu_gather_rows(real *dst, const real *table, const int *ids, int n, int cols);
void cu_scatter_add_rows(real *table, const real *src, const int *ids, const unsigned char *mask, int n, int cols);
void cu_scatter_rows(real *table, const real *src, const int *ids, int n, int cols);
void cu_gather_cols(real *dst, const real *src, const int *ids, int n, int rows, long sj, long sk);
// update.cu
double cu_sumsq(const real *g, size_t n);
void cu_update(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi);
void cu_update_rows(int rule, const bk_hyper *h, real *p, real *g, real *const *s, int ns, size_t off, int rows,
                    int cols, unsigned *lag);
void cu_settle_rows(real *const *s, int ns, real rho, size_t off, int rows, int cols, unsigned *lag);
// transformer.cu
void cu_layer_norm(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma, const real *beta, int R,
                   int cols, real eps);
void cu_layer_norm_backward(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy, const real *x, int ldx,
                            const real *stats, const real *gamma, int R, int cols);
void cu_attn_softmax(real *S, const int *klen, int kfix, int n, int heads, int Tq, int Tk, int causal, int qoff,
                     real scale);
void cu_attn_softmax_backward(real *dS, const real *P, const real *dP, long rows, int Tk, real scale);
void cu_gemm_batched(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                     real *C, int ldc, const bk_batch *s);
void cu_act_grad_x_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *x, int ldx, int R, int cols);
void cu_dropout_mask(real *m, long n, uint64_t seed, real p);
void cu_gather_rows_ld(real *dst, long ldd, const real *src, long lds, const int *ids, int n, long cols);
// topk.cu
void cu_topk_rows(int *n, real *lp, int *v, real *lse, const real *z, int H, int V, const int *need, int cap,
                  int skip, topk_item *heap, int kmax, int logp);
void cu_logp_acc_rows(real *y, const real *z, int H, int V, real w, int first);

#endif
