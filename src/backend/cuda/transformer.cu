// transformer.cu: the CUDA kernels of the Transformer family (backend.h), twins of
// src/backend/cpu/transformer.c: layer norm and its backward, attention's masked softmax and its
// backward, the heads' batched products, the activations' derivatives and the cache's gather.
#include "backend/cuda/cuda_int.h"

// ---- layer norm: one block per row, μ and σ² summed in double by the block's fixed tree ----

__global__ static void layer_norm_kernel(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma,
                                         const real *beta, int cols, real eps)
{
    __shared__ double sh[32];
    long r = blockIdx.x;
    const real *xr = x + r * ldx;
    double s = 0, q = 0;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) s += xr[k];
    double mu = cu_block_sum(s, sh) / cols;
    for (int k = threadIdx.x; k < cols; k += blockDim.x) q += (xr[k] - mu) * (xr[k] - mu);
    real rstd = (real)(1.0 / sqrt(cu_block_sum(q, sh) / cols + eps)), m = (real)mu;
    // each thread writes only the columns it read: y may be x
    for (int k = threadIdx.x; k < cols; k += blockDim.x) y[r * ldy + k] = (xr[k] - m) * rstd * gamma[k] + beta[k];
    if (threadIdx.x) return;
    stats[2 * r] = m;
    stats[2 * r + 1] = rstd;
}

void cu_layer_norm(real *y, int ldy, real *stats, const real *x, int ldx, const real *gamma, const real *beta, int R,
                   int cols, real eps)
{
    if (R <= 0 || cols <= 0) return;
    layer_norm_kernel<<<R, CU_THREADS, 0, cu_stream()>>>(y, ldy, stats, x, ldx, gamma, beta, cols, eps);
    cu_check("layer_norm");
}

// the sums of g = γ∘dy and g∘x̂ in double, then each column from its own inputs (the CPU's expressions)
__global__ static void layer_norm_back_kernel(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy,
                                              const real *x, int ldx, const real *stats, const real *gamma, int n)
{
    __shared__ double sh[32];
    long r = blockIdx.x;
    const real *dyr = dy + r * lddy, *xr = x + r * ldx;
    real mu = stats[2 * r], rstd = stats[2 * r + 1];
    double sg = 0, sgx = 0;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        real xh = (xr[k] - mu) * rstd, g = gamma[k] * dyr[k];
        gx[r * n + k] = dyr[k] * xh;
        sg += g;
        sgx += (double)g * xh;
    }
    real mg = (real)(cu_block_sum(sg, sh) / n), mgx = (real)(cu_block_sum(sgx, sh) / n);
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        real xh = (xr[k] - mu) * rstd, v = rstd * (gamma[k] * dyr[k] - mg - xh * mgx);
        real *d = dx + r * lddx + k;
        *d = acc ? *d + v : v;
    }
}

void cu_layer_norm_backward(real *dx, int lddx, int acc, real *gx, const real *dy, int lddy, const real *x, int ldx,
                            const real *stats, const real *gamma, int R, int cols)
{
    if (R <= 0 || cols <= 0) return;
    layer_norm_back_kernel<<<R, CU_THREADS, 0, cu_stream()>>>(dx, lddx, acc, gx, dy, lddy, x, ldx, stats, gamma, cols);
    cu_check("layer_norm_backward");
}

// ---- attention's softmax: one block per row of keys (rows are short: 128 threads) ----

enum { SM_THREADS = 128 };

// the keys row (o, head, i) of S attends to: j < len, and with causal j <= i + qoff
__device__ static inline int keys_of(long r, const int *klen, int kfix, int heads, int Tq, int Tk, int causal, int qoff)
{
    long o = r / ((long)heads * Tq);
    int i = (int)(r % Tq), len = klen ? klen[o] : kfix;
    if (causal && i + qoff + 1 < len) len = i + qoff + 1;
    return len > Tk ? Tk : len < 0 ? 0 : len;
}

__global__ static void attn_softmax_kernel(real *S, const int *klen, int kfix, int heads, int Tq, int Tk, int causal,
                                           int qoff, real scale)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    long r = blockIdx.x;
    int len = keys_of(r, klen, kfix, heads, Tq, Tk, causal, qoff);
    real *s = S + r * Tk, mx = -INFINITY;
    for (int k = threadIdx.x; k < len; k += blockDim.x) mx = fmaxf(mx, s[k] * scale);
    mx = cu_block_max(mx, shf);
    double sum = 0;
    for (int k = threadIdx.x; k < len; k += blockDim.x) {
        real e = expf(s[k] * scale - mx);
        s[k] = e;
        sum += e;
    }
    real inv = (real)(1.0 / cu_block_sum(sum, shd));
    for (int k = threadIdx.x; k < Tk; k += blockDim.x) s[k] = k < len ? s[k] * inv : 0; // a thread's own columns
}

void cu_attn_softmax(real *S, const int *klen, int kfix, int n, int heads, int Tq, int Tk, int causal, int qoff,
                     real scale)
{
    long rows = (long)n * heads * Tq;
    if (rows <= 0 || Tk <= 0) return;
    attn_softmax_kernel<<<(unsigned)rows, SM_THREADS, 0, cu_stream()>>>(S, klen, kfix, heads, Tq, Tk, causal, qoff,
                                                                         scale);
    cu_check("attn_softmax");
}

// Σ_j P_j dP_j in double; the block's barriers put every read of dP before the writes (dS may be dP)
__global__ static void attn_softmax_back_kernel(real *dS, const real *P, const real *dP, int Tk, real scale)
{
    __shared__ double sh[32];
    long r = blockIdx.x;
    const real *p = P + r * Tk, *dp = dP + r * Tk;
    double s = 0;
    for (int k = threadIdx.x; k < Tk; k += blockDim.x) s += (double)p[k] * dp[k];
    real m = (real)cu_block_sum(s, sh);
    for (int k = threadIdx.x; k < Tk; k += blockDim.x) dS[r * Tk + k] = scale * p[k] * (dp[k] - m);
}

void cu_attn_softmax_backward(real *dS, const real *P, const real *dP, long rows, int Tk, real scale)
{
    if (rows <= 0 || Tk <= 0) return;
    attn_softmax_back_kernel<<<(unsigned)rows, SM_THREADS, 0, cu_stream()>>>(dS, P, dP, Tk, scale);
    cu_check("attn_softmax_backward");
}

// ---- batched products: one thread per element of C, its sum over k in order, so that each row
// is computed alone (gemm_rows' promise) and is the CPU's bit for bit ----

void cu_gemm_batched(int ta, int tb, int M, int N, int K, const real *A, int lda, const real *B, int ldb, real beta,
                     real *C, int ldc, const bk_batch *s)
{
    if (s->count <= 0 || M <= 0) return;
    bk_batch b = *s; // the host's struct, by value into the kernel (sel itself is device memory)
    cu_rows("gemm_batched", b.count * M, N, [=] __device__(int row, int n) {
        long p = row / M, o = p / b.inner, k = p % b.inner, ob = b.sel ? b.sel[o] : o;
        int i = row % M;
        const real *a = A + o * b.oa + k * b.ia, *bm = B + ob * b.ob + k * b.ib;
        real acc = 0;
        for (int q = 0; q < K; q++) {
            real x = ta ? a[(long)q * lda + i] : a[(long)i * lda + q], y = tb ? bm[(long)n * ldb + q] : bm[(long)q * ldb + n];
            acc += x * y;
        }
        real *c = C + o * b.oc + k * b.ic + (long)i * ldc + n;
        *c = beta == 0 ? acc : beta * *c + acc;
    });
}

// ---- the activations' derivatives from their input, and the cache's gather ----

void cu_act_grad_x_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *x, int ldx, int R, int cols)
{
    cu_rows("act_grad_x_rows", R, cols, [=] __device__(int r, int k) {
        dx[(long)r * lddx + k] = dy[(long)r * lddy + k] * cu_act_grad_x(f, x[(long)r * ldx + k]);
    });
}

void cu_gather_rows_ld(real *dst, long ldd, const real *src, long lds, const int *ids, int n, long cols)
{
    cu_rows("gather_rows_ld", n, (int)cols, [=] __device__(int i, int k) { dst[i * ldd + k] = src[ids[i] * lds + k]; });
}

// inverted dropout's mask from the hash of (seed, i): the CPU's splitmix64 finaliser, bit for bit
void cu_dropout_mask(real *m, long n, uint64_t seed, real p)
{
    real keep = 1 / (1 - p);
    cu_rows("dropout_mask", 1, (int)n, [=] __device__(int, int k) {
        uint64_t z = seed + (uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        real u = (real)(z >> 40) * (real)(1.0 / 16777216.0);
        m[k] = u >= p ? keep : 0;
    });
}
