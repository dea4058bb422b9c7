// update.cu: the CUDA kernels of the optimizers, twins of src/backend/cpu/update.c: the
// gradient's squared norm in a fixed order (fixed chunks, a fixed tree, chunks summed in order),
// the dense update, and the row-lazy update whose skipped rows owe their decay until touched.
#include "backend/cuda/cuda_int.h"
#include "backend/rules.h"

enum { CH = 1 << 16 }; // elements per chunk of the norm, as the CPU's

__global__ static void sumsq_chunks(double *part, const real *g, size_t n)
{
    __shared__ double sh[32];
    size_t lo = (size_t)blockIdx.x * CH, hi = lo + CH < n ? lo + CH : n;
    double s = 0;
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += (double)g[i] * g[i];
    s = cu_block_sum(s, sh);
    if (!threadIdx.x) part[blockIdx.x] = s;
}

__global__ static void sumsq_total(double *out, const double *part, size_t nch)
{
    double t = 0;
    for (size_t c = 0; c < nch; c++) t += part[c];
    *out = t;
}

double cu_sumsq(const real *g, size_t n)
{
    if (!n) return 0;
    size_t nch = (n + CH - 1) / CH;
    double *part = (double *)cu_scratch(sizeof(double) * (nch + 1)), total;
    if (!part) return NAN; // no memory: a norm that is no number, which training reports
    sumsq_chunks<<<(unsigned)nch, CU_THREADS, 0, cu_stream()>>>(part, g, n);
    cu_check("sumsq");
    sumsq_total<<<1, 1, 0, cu_stream()>>>(part + nch, part, nch);
    cu_check("sumsq (total)");
    cu_copy_out(&total, part + nch, sizeof total);
    return total;
}

// the state tensors by value, for a kernel's arguments
typedef struct states { real *s[4]; } states;
static states states_of(real *const *s, int ns)
{
    states t = {{NULL, NULL, NULL, NULL}};
    for (int i = 0; i < ns && i < 4 && s; i++) t.s[i] = s[i];
    return t;
}
static int rule_states(int rule) { return rule == BK_SGD ? 0 : rule == BK_ADAGRAD ? 1 : 2; }

// the rule on element i (rules.h, the CPU's expressions); g is read and left zero
__device__ static inline void rule_at(int rule, const bk_hyper &h, real *p, real *g, states s, size_t i)
{
    switch (rule) {
    case BK_ADADELTA: rule_adadelta(p, g, s.s[0], s.s[1], i, h.lr, h.scale, h.rho, h.eps); break;
    case BK_ADAGRAD: rule_adagrad(p, g, s.s[0], i, h.lr, h.scale, h.eps); break;
    case BK_ADAM: rule_adam(p, g, s.s[0], s.s[1], i, h.lr, h.scale, h.b1, h.b2, h.c1, h.c2, h.eps); break;
    default: rule_sgd(p, g, i, h.lr, h.scale);
    }
}

__global__ static void update_kernel(int rule, bk_hyper h, real *p, real *g, states s, size_t lo, size_t hi)
{
    for (size_t i = lo + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < hi; i += (size_t)gridDim.x * blockDim.x)
        rule_at(rule, h, p, g, s, i);
}

void cu_update(int rule, const bk_hyper *h, real *p, real *g, real *const *s, size_t lo, size_t hi)
{
    if (hi <= lo) return;
    update_kernel<<<cu_blocks((long)(hi - lo)), CU_THREADS, 0, cu_stream()>>>(rule, *h, p, g,
                                                                              states_of(s, rule_states(rule)), lo, hi);
    cu_check("update");
}

// row lo .. lo+cols pays its owed decays (one multiplication at a time, as the eager loop did);
// the block's threads share the row, thread 0 clears the debt after the barrier
__device__ static inline void settle_row(states s, int ns, real rho, size_t lo, int cols, unsigned k)
{
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        for (unsigned t = 0; t < k; t++)
            for (int i = 0; i < ns; i++) s.s[i][lo + j] = rho * s.s[i][lo + j];
}

// one block per row
__global__ static void update_rows_kernel(int rule, bk_hyper h, real *p, real *g, states s, int ns, size_t off,
                                          int cols, unsigned *lag)
{
    int r = blockIdx.x;
    size_t lo = off + (size_t)r * cols;
    int any = 0; // a bit other than the sign: denormals count
    for (int j = threadIdx.x; j < cols; j += blockDim.x) any |= (__float_as_uint(g[lo + j]) & 0x7fffffffu) != 0;
    if (!__syncthreads_or(any)) {
        if (lag && !threadIdx.x) lag[r]++;
        return;
    }
    if (lag) {
        settle_row(s, ns, h.rho, lo, cols, lag[r]);
        __syncthreads();
        if (!threadIdx.x) lag[r] = 0;
    }
    for (int j = threadIdx.x; j < cols; j += blockDim.x) rule_at(rule, h, p, g, s, lo + j);
}

void cu_update_rows(int rule, const bk_hyper *h, real *p, real *g, real *const *s, int ns, size_t off, int rows,
                    int cols, unsigned *lag)
{
    if (rows <= 0 || cols <= 0) return;
    update_rows_kernel<<<rows, CU_THREADS, 0, cu_stream()>>>(rule, *h, p, g, states_of(s, ns), ns, off, cols, lag);
    cu_check("update_rows");
}

__global__ static void settle_rows_kernel(states s, int ns, real rho, size_t off, int cols, unsigned *lag)
{
    int r = blockIdx.x;
    settle_row(s, ns, rho, off + (size_t)r * cols, cols, lag[r]);
    __syncthreads();
    if (!threadIdx.x) lag[r] = 0;
}

void cu_settle_rows(real *const *s, int ns, real rho, size_t off, int rows, int cols, unsigned *lag)
{
    if (rows <= 0) return;
    settle_rows_kernel<<<rows, CU_THREADS, 0, cu_stream()>>>(states_of(s, ns), ns, rho, off, cols, lag);
    cu_check("settle_rows");
}
