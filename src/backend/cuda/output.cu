// output.cu: the CUDA kernels of the readout (maxout, softmax + NLL with label smoothing and its
// fused backward) and of the embedding tables, twins of src/backend/cpu/output.c. Sums across
// rows run in a fixed order (no atomics), so a result does not depend on scheduling.
#include "backend/cuda/cuda_int.h"

void cu_repeat_row(real *Z, const real *row, int H, int V)
{
    cu_rows("repeat_row", H, V, [=] __device__(int h, int k) { Z[(long)h * V + k] = row[k]; });
}

void cu_maxout(real *t, unsigned char *which, const real *tt, const real *b, const int *rows, int N, int l)
{
    cu_rows("maxout", N, l, [=] __device__(int r, int k) {
        long row = rows ? rows[r] : r;
        real x = tt[row * 2 * l + 2 * k] + b[2 * k], y = tt[row * 2 * l + 2 * k + 1] + b[2 * k + 1];
        if (which) which[row * l + k] = y > x;
        t[(long)r * l + k] = y > x ? y : x;
    });
}

void cu_maxout_backward(real *dtt, const real *dt, const unsigned char *which, const int *rows, int N, int l)
{
    cu_rows("maxout_backward", N, l, [=] __device__(int r, int k) {
        long row = rows ? rows[r] : r;
        dtt[row * 2 * l + 2 * k + which[row * l + k]] = dt[(long)r * l + k];
    });
}

// one block per row; the row keeps e^{z - max} for backward
__global__ static void softmax_nll_kernel(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y,
                                          int V, double ls)
{
    __shared__ float shf[32];
    __shared__ double shd[32];
    int r = blockIdx.x, row = rows ? rows[r] : r;
    real *zr = z + (long)r * V, zy = zr[y[row]]; // read before the row becomes e^{z - max}
    double zs = 0;
    real mx = -INFINITY;
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
        mx = fmaxf(mx, zr[k]);
        zs += zr[k];
    }
    mx = cu_block_max(mx, shf); // its barriers keep every read of the row before the writes
    double zsum = ls > 0 ? cu_block_sum(zs, shd) : 0, s = 0;
    for (int k = threadIdx.x; k < V; k += blockDim.x) {
        real e = expf(zr[k] - mx);
        zr[k] = e;
        s += e;
    }
    double sum = cu_block_sum(s, shd);
    if (threadIdx.x) return;
    real lse = mx + (real)log(sum), l = zy - lse;
    rinv[r] = 1 / sum;
    if (lp) lp[row] = l;
    double loss = -(double)l;
    // (1/V) Σ_k -log p(k) = lse - (1/V) Σ_k z_k
    nll[r] = ls > 0 ? (1 - ls) * loss + ls * ((double)lse - zsum / V) : loss;
}

void cu_softmax_nll(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y, int N, int V,
                    double ls)
{
    if (N <= 0) return;
    softmax_nll_kernel<<<N, CU_THREADS * 2, 0, cu_stream()>>>(z, rinv, nll, lp, rows, y, V, ls);
    cu_check("softmax_nll");
}

// to bf16, nearest even, NaN kept quiet (as the CPU's dnnl_cpu_bf16_span)
__device__ static inline uint16_t bf16_bits(float x)
{
    unsigned u = __float_as_uint(x);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

// thread (k, q): column k over block q's rows in order, into part[q, k]; the target's entry takes
// -hit after its share went into the sum, as the CPU's order has it
__global__ static void softmax_back_kernel(real *z, real *part, const double *rinv, const int *rows, const int *y,
                                           int N, int V, real scale, real u, real hit, int blk, uint16_t *z16)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x, q = blockIdx.y;
    if (k >= V) return;
    real p = 0;
    for (int r = q * blk; r < N && r < (q + 1) * blk; r++) {
        long i = (long)r * V + k;
        real f = (real)(scale * rinv[r]), v = z[i] * f - u;
        p += v;
        if (y[rows ? rows[r] : r] == k) {
            v -= hit;
            p -= hit;
        }
        z[i] = v;
        if (z16) z16[i] = bf16_bits(v);
    }
    part[(long)q * V + k] = p;
}

__global__ static void bias_sum_kernel(real *dbias, const real *part, int nblk, int V)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= V) return;
    real d = dbias[k];
    for (int q = 0; q < nblk; q++) d += part[(long)q * V + k];
    dbias[k] = d;
}

void cu_softmax_nll_backward(real *z, real *dbias, real *part, const double *rinv, const int *rows, const int *y,
                             int N, int V, real scale, real ls, int blk, uint16_t *z16)
{
    if (N <= 0 || V <= 0) return;
    int nblk = (N + blk - 1) / blk;
    real u = scale * ls / (real)V, hit = scale * (1 - ls);
    dim3 grid((V + CU_THREADS - 1) / CU_THREADS, nblk);
    softmax_back_kernel<<<grid, CU_THREADS, 0, cu_stream()>>>(z, part, rinv, rows, y, N, V, scale, u, hit, blk, z16);
    cu_check("softmax_nll_backward");
    bias_sum_kernel<<<(V + CU_THREADS - 1) / CU_THREADS, CU_THREADS, 0, cu_stream()>>>(dbias, part, nblk, V);
    cu_check("softmax_nll_backward (bias)");
}

void cu_gather_rows(real *dst, const real *table, const int *ids, int n, int cols)
{
    cu_rows("gather_rows", n, cols, [=] __device__(int i, int k) {
        int id = ids[i];
        dst[(long)i * cols + k] = id < 0 ? 0 : table[(long)id * cols + k];
    });
}

void cu_gather_cols(real *dst, const real *src, const int *ids, int n, int rows, long sj, long sk)
{
    cu_rows("gather_cols", rows, n, [=] __device__(int k, int j) {
        dst[(long)k * n + j] = src[(long)ids[j] * sj + (long)k * sk];
    });
}

void cu_scatter_rows(real *table, const real *src, const int *ids, int n, int cols)
{
    cu_rows("scatter_rows", n, cols, [=] __device__(int i, int k) {
        table[(long)ids[i] * cols + k] = src[(long)i * cols + k];
    });
}

// Rows of one word meet in one destination: thread (k, p) walks i in order over the rows whose
// word falls in bucket p (id mod SCATTER_BUCKETS), so each destination sums in the CPU's order,
// bit for bit, without atomics, and the buckets spread the rows over SCATTER_BUCKETS times more
// threads than the columns alone (every thread reads every id, which the warp shares)
enum { SCATTER_BUCKETS = 32 };
__global__ static void scatter_add_kernel(real *table, const real *src, const int *ids, const unsigned char *mask,
                                          int n, int cols)
{
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned p = blockIdx.y;
    if (k >= cols) return;
    for (int i = 0; i < n; i++)
        if ((unsigned)ids[i] % SCATTER_BUCKETS == p && (!mask || mask[i]))
            table[(long)ids[i] * cols + k] += src[(long)i * cols + k];
}

void cu_scatter_add_rows(real *table, const real *src, const int *ids, const unsigned char *mask, int n, int cols)
{
    if (n <= 0 || cols <= 0) return;
    if (!ids) { // row i into row i: no two rows meet
        cu_rows("scatter_add_rows", n, cols, [=] __device__(int i, int k) {
            if (!mask || mask[i]) table[(long)i * cols + k] += src[(long)i * cols + k];
        });
        return;
    }
    dim3 grid((cols + 63) / 64, SCATTER_BUCKETS);
    scatter_add_kernel<<<grid, 64, 0, cu_stream()>>>(table, src, ids, mask, n, cols);
    cu_check("scatter_add_rows");
}
