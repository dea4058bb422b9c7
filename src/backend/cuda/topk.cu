// topk.cu: the beam's scan of one row of logits, twin of src/backend/cpu/topk.c, one block per
// row: its log-normaliser, the need-th best score by a radix select (exact, so the CPU's tie
// rules hold: every word tied with it is a candidate), the candidates in word order; and the
// weighted log-probabilities an ensemble searches.
#include "backend/cuda/cuda_int.h"

// floats as unsigned keys in the same order (-0 just below +0, which compare equal as values)
__device__ static inline unsigned key_of(float x)
{
    unsigned u = __float_as_uint(x);
    return u & 0x80000000u ? ~u : u | 0x80000000u;
}
__device__ static inline float value_of(unsigned k) { return __uint_as_float(k & 0x80000000u ? k & 0x7fffffffu : ~k); }

// log Σ_v e^{z_v}: the max, the sum of e^{z - max} in double, as the CPU's vec_logsumexp
__device__ static real row_lse(const real *z, int V, float *shf, double *shd)
{
    real mx = -INFINITY;
    for (int k = threadIdx.x; k < V; k += blockDim.x) mx = fmaxf(mx, z[k]);
    mx = cu_block_max(mx, shf);
    double s = 0;
    for (int k = threadIdx.x; k < V; k += blockDim.x) s += expf(z[k] - mx);
    return mx + (real)log(cu_block_sum(s, shd));
}

// one pass of the radix select: the histogram of the digit at shift among the keys that match
// prefix under mask (v != skip); fold(z_k) sees every value this thread reads, in the order
// row_lse reads them, so that the log-normaliser rides on the same passes
template <class G>
__device__ static void radix_pass(const real *z, int V, int skip, unsigned prefix, unsigned mask, int shift,
                                  unsigned *hist, G fold)
{
    for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
    __syncthreads();
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
        real x = z[k];
        fold(x);
        unsigned key = key_of(x);
        if (k != skip && (key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 255], 1u);
    }
    __syncthreads();
}

// the want-th largest z of the row (v != skip), 8 bits of its key a pass; want <= the words.
// With lse, *lse = row_lse's value from the same reads: the maximum in the first pass, the sum
// of e^{z - max} in the second, each thread's in row_lse's order, the same block reductions
__device__ static float row_select(const real *z, int V, int skip, int want, real *lse, float *shf, double *shd)
{
    __shared__ unsigned hist[256], s_prefix;
    __shared__ int s_want;
    unsigned prefix = 0, mask = 0;
    real mx = -INFINITY;
    double s = 0;
    for (int shift = 24; shift >= 0; shift -= 8) {
        radix_pass(z, V, skip, prefix, mask, shift, hist, [&](real x) {
            if (lse && shift == 24) mx = fmaxf(mx, x);
            else if (lse && shift == 16) s += expf(x - mx);
        });
        if (lse && shift == 24) mx = cu_block_max(mx, shf);
        if (lse && shift == 16) *lse = mx + (real)log(cu_block_sum(s, shd));
        if (!threadIdx.x) { // the digit holding the want-th largest, counting down from 255
            int d = 255;
            unsigned above = 0;
            while (d > 0 && above + hist[d] < (unsigned)want) above += hist[d--];
            s_prefix = prefix | (unsigned)d << shift;
            s_want = want - (int)above;
        }
        __syncthreads();
        prefix = s_prefix;
        want = s_want;
        mask |= 255u << shift;
    }
    return value_of(prefix);
}

__global__ static void topk_kernel(int *n, real *lp, int *v, real *lse, const real *z, int V, const int *need, int cap,
                                   int skip, int logp)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    __shared__ int wcount[32];
    int r = blockIdx.x, nw = blockDim.x / 32, w = threadIdx.x / 32, lane = threadIdx.x % 32;
    const real *zr = z + (long)r * V;
    int words = V - (skip >= 0 && skip < V), want = need[r] < words ? need[r] : words;
    real l = 0;
    if (want <= 0) {
        if (!logp) l = row_lse(zr, V, shf, shd);
        if (!threadIdx.x) lse[r] = l, n[r] = 0;
        return;
    }
    // the need-th best score, and the log-normaliser on the same passes over the row
    real best = row_select(zr, V, skip, want, logp ? NULL : &l, shf, shd);
    if (!threadIdx.x) lse[r] = l;
    real lpk = best - l; // the need-th best lp, rounded as each lp is
    int total = 0;
    for (int base = 0; base < V; base += blockDim.x) { // block-wide compaction, in word order
        int k = base + threadIdx.x;
        bool pred = k < V && k != skip && (real)(zr[k] - l) >= lpk;
        unsigned bal = __ballot_sync(0xffffffffu, pred);
        if (!lane) wcount[w] = __popc(bal);
        __syncthreads();
        int at = total, tile = 0;
        for (int i = 0; i < nw; i++) {
            if (i < w) at += wcount[i];
            tile += wcount[i];
        }
        at += __popc(bal & ((1u << lane) - 1));
        if (pred && at < cap) {
            lp[(long)r * cap + at] = zr[k] - l;
            v[(long)r * cap + at] = k;
        }
        total += tile;
        __syncthreads();
    }
    if (!threadIdx.x) n[r] = total > cap ? -1 : total;
}

void cu_topk_rows(int *n, real *lp, int *v, real *lse, const real *z, int H, int V, const int *need, int cap,
                  int skip, topk_item *heap, int kmax, int logp)
{
    (void)heap, (void)kmax; // the radix select needs no heap
    if (H <= 0) return;
    topk_kernel<<<H, CU_THREADS, 0, cu_stream()>>>(n, lp, v, lse, z, V, need, cap, skip, logp);
    cu_check("topk_rows");
}

// the same lse and the same rounded difference as topk_kernel forms
__global__ static void logp_acc_kernel(real *y, const real *z, int V, real w, int first)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    const real *zr = z + (long)blockIdx.x * V;
    real *yr = y + (long)blockIdx.x * V, l = row_lse(zr, V, shf, shd);
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
        real d = w * (real)(zr[k] - l);
        yr[k] = first ? d : yr[k] + d;
    }
}

void cu_logp_acc_rows(real *y, const real *z, int H, int V, real w, int first)
{
    if (H <= 0) return;
    logp_acc_kernel<<<H, CU_THREADS, 0, cu_stream()>>>(y, z, V, w, first);
    cu_check("logp_acc_rows");
}
