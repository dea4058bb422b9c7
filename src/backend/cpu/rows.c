/* rows.c: the CPU kernels that run element-wise over strided rows (backend.h): zeroing and
 * copying parts of rows, bias adds and activations, their derivatives, sums, products and the
 * per-row scaled differences and norms of FertDec's costs. Each element goes through exactly the
 * scalar expression the layers used to write in place (tanh and σ are real.h's rtanh/rsigmoid,
 * not the vector forms of vec.h), so moving a loop here changes no bit. */
#include <string.h>

#include "backend/cpu/cpu.h"

/* Rows split over the threads only when there is work enough to pay for a team (threads.c) */
static int wide(int R, int cols)
{
    return cpu_team(R, (long)R * cols);
}

void cpu_zero_rows(real *y, int ldy, int R, int cols)
{
    if (cols <= 0) return;
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) memset(y + (size_t)r * ldy, 0, sizeof(real) * cols);
}

void cpu_copy_rows(real *y, int ldy, const real *x, int ldx, int R, int cols)
{
    if (cols <= 0) return;
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) memcpy(y + (size_t)r * ldy, x + (size_t)r * ldx, sizeof(real) * cols);
}

/* the Transformer's feed-forward activations (backend.h enum bk_fn) */
static real ffn_act(int f, real x)
{
    if (f == BK_RELU) return x > 0 ? x : 0;
    if (f == BK_SWISH) return x * rsigmoid(x);
    return (real)0.5 * x * (1 + rtanh((real)0.7978845608028654 * (x + (real)0.044715 * x * x * x))); /* gelu */
}

/* one row of act_rows: with no bias, f(x) itself (x + 0 would turn -0 into +0) */
static void act_row(int f, real *y, const real *x, const real *b, int n)
{
    switch (f) {
    case BK_TANH:
        if (b) for (int k = 0; k < n; k++) y[k] = rtanh(x[k] + b[k]);
        else for (int k = 0; k < n; k++) y[k] = rtanh(x[k]);
        break;
    case BK_SIGMOID:
        if (b) for (int k = 0; k < n; k++) y[k] = rsigmoid(x[k] + b[k]);
        else for (int k = 0; k < n; k++) y[k] = rsigmoid(x[k]);
        break;
    case BK_RELU:
    case BK_GELU:
    case BK_SWISH:
        for (int k = 0; k < n; k++) y[k] = ffn_act(f, b ? x[k] + b[k] : x[k]);
        break;
    default: /* BK_IDENTITY */
        if (b) for (int k = 0; k < n; k++) y[k] = x[k] + b[k];
        else if (y != x) memcpy(y, x, sizeof(real) * n);
    }
}

void cpu_act_rows(int f, real *y, int ldy, const real *x, int ldx, const real *b, int R, int cols)
{
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) act_row(f, y + (size_t)r * ldy, x + (size_t)r * ldx, b, cols);
}

/* one row of act_grad_rows; the products associate left to right, as the layers wrote them */
static void act_grad_row(int f, real *dx, const real *dy, const real *y, int n)
{
    switch (f) {
    case BK_TANH:
        for (int k = 0; k < n; k++) dx[k] = dy[k] * (1 - y[k] * y[k]);
        break;
    case BK_SIGMOID:
        for (int k = 0; k < n; k++) dx[k] = dy[k] * y[k] * (1 - y[k]);
        break;
    default: /* BK_IDENTITY */
        if (dx != dy) memcpy(dx, dy, sizeof(real) * n);
    }
}

void cpu_act_grad_rows(int f, real *dx, int lddx, const real *dy, int lddy, const real *y, int ldy, int R, int cols)
{
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) act_grad_row(f, dx + (size_t)r * lddx, dy + (size_t)r * lddy, y + (size_t)r * ldy, cols);
}

void cpu_add_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) {
        real *yr = y + (size_t)r * ldy;
        const real *ar = a + (size_t)r * lda, *br = b + (size_t)r * ldb;
        for (int k = 0; k < cols; k++) yr[k] = ar[k] + br[k];
    }
}

void cpu_mul_rows(real *y, int ldy, const real *a, int lda, const real *b, int ldb, int R, int cols)
{
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) {
        real *yr = y + (size_t)r * ldy;
        const real *ar = a + (size_t)r * lda, *br = b + (size_t)r * ldb;
        for (int k = 0; k < cols; k++) yr[k] = ar[k] * br[k];
    }
}

void cpu_axpy_diff_rows(real *y, int ldy, const real *u, const real *x, int ldx, const real *z, int ldz, int R,
                        int cols)
{
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) {
        real *yr = y + (size_t)r * ldy, ur = u[r];
        const real *xr = x + (size_t)r * ldx, *zr = z ? z + (size_t)r * ldz : NULL;
        if (zr) for (int k = 0; k < cols; k++) yr[k] += ur * (xr[k] - zr[k]);
        else for (int k = 0; k < cols; k++) yr[k] += ur * xr[k];
    }
}

void cpu_dist_rows(double *out, const real *x, int ldx, const real *z, int ldz, int R, int cols)
{
#pragma omp parallel for schedule(static) if (wide(R, cols))
    for (int r = 0; r < R; r++) {
        const real *xr = x + (size_t)r * ldx, *zr = z ? z + (size_t)r * ldz : NULL;
        double s = 0; /* one running sum: the order of the columns is part of the result */
        for (int k = 0; k < cols; k++) {
            real d = zr ? xr[k] - zr[k] : xr[k];
            s += (double)d * d;
        }
        out[r] = sqrt(s);
    }
}
