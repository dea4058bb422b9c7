// rows.cu: the CUDA kernels that run element-wise over strided rows (backend.h), one thread per
// element, each computing the CPU's scalar expression (src/backend/cpu/rows.c) in the same
// order of operations; plus the bias gradient's column sums and the beta scaling of gemm.
#include "backend/cuda/cuda_int.h"

// C[j] += the rows of A in order: one thread per column, so the sum is the CPU's, bit for bit
__global__ static void colsum_kernel(real *C, const real *A, int M, int N, int lda)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    real c = C[j];
    for (int i = 0; i < M; i++) c += A[(long)i * lda + j];
    C[j] = c;
}

void cu_colsum_add(real *C, const real *A, int M, int N, int lda)
{
    if (N <= 0 || M <= 0) return;
    // blocks of one warp: the columns are few (a bias's width), and spread over as many
    // multiprocessors as possible each column's serial sum overlaps more loads
    colsum_kernel<<<(N + 31) / 32, 32, 0, cu_stream()>>>(C, A, M, N, lda);
    cu_check("colsum_add");
}

void cu_scale_rows(real *C, int ldc, int M, int N, real beta)
{
    cu_rows("gemm (K = 0)", M, N, [=] __device__(int r, int k) {
        real *c = C + (long)r * ldc + k;
        *c = beta == 0 ? 0 : beta * *c;
    });
}

void cu_vexp(real *y, const real *x, int n)
{
    cu_rows("vexp", 1, n, [=] __device__(int, int k) { y[k] = expf(x[k]); });
}

void cu_zero_rows(real *y, int ldy, int R, int cols)
{
    cu_rows("zero_rows", R, cols, [=] __device__(int r, int k) { y[(long)r * ldy + k] = 0; });
}

void cu_copy_rows(real *y, int ldy, const real *x, int ldx, int R, int cols)
{
    cu_rows("copy_rows", R, cols, [=] __device__(int r, int k) { y[(long)r * ldy + k] = x[(long)r * ldx + k]; });
}

// with no bias, f(x) itself (x + 0 would turn -0 into +0)
void cu_act_rows(int f, real *y, int ldy, const real *x, int ldx, const real *b, int R, int cols)
{
    cu_rows("act_rows", R, cols, [=] __device__(int r, int k) {
        real v = b ? x[(long)r * ldx + k] + b[k] : x[(long)r * ldx + k];
        y[(long)r * ldy + k] = cu_act(f, v);
    });
}

// the products associate left to right, as the CPU's
void cu_act_grad_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R, int cols)
{
    cu_rows("act_grad_rows", R, cols, [=] __device__(int r, int k) {
        real g = dy[(long)r * lddy + k], o = y[(long)r * ldy + k];
        dx[(long)r * lddx + k] = f == BK_TANH ? g * (1 - o * o) : f == BK_SIGMOID ? g * o * (1 - o) : g;
    });
}

void cu_add_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
    cu_rows("add_rows", R, cols, [=] __device__(int r, int k) {
        y[(long)r * ldy + k] = a[(long)r * lda + k] + b[(long)r * ldb + k];
    });
}

void cu_mul_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
    cu_rows("mul_rows", R, cols, [=] __device__(int r, int k) {
        y[(long)r * ldy + k] = a[(long)r * lda + k] * b[(long)r * ldb + k];
    });
}

void cu_axpy_diff_rows(real *y, int ldy, const real *u, const real *x, int ldx, const real *z, int ldz, int R,
                       int cols)
{
    cu_rows("axpy_diff_rows", R, cols, [=] __device__(int r, int k) {
        real d = z ? x[(long)r * ldx + k] - z[(long)r * ldz + k] : x[(long)r * ldx + k];
        y[(long)r * ldy + k] += u[r] * d;
    });
}

// one thread per row: the sum runs in the order of the columns, as the CPU's (rows are few)
__global__ static void dist_kernel(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    const real *xr = x + (long)r * ldx, *zr = z ? z + (long)r * ldz : NULL;
    double s = 0;
    for (int k = 0; k < cols; k++) {
        real d = zr ? xr[k] - zr[k] : xr[k];
        s += (double)d * d;
    }
    out[r] = sqrt(s);
}

void cu_dist_rows(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols)
{
    if (R <= 0) return;
    dist_kernel<<<(R + CU_THREADS - 1) / CU_THREADS, CU_THREADS, 0, cu_stream()>>>(out, x, ldx, z, ldz, R, cols);
    cu_check("dist_rows");
}
