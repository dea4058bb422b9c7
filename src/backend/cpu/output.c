/* output.c: the CPU kernels of the readout (maxout, softmax + negative log-likelihood and its
 * fused backward, MODEL.md section 2) and of the embedding tables. Rows run in parallel; sums
 * across rows run in a fixed order, so results do not depend on the thread count. */
#include <string.h>

#include "backend/cpu/cpu.h"
#include "backend/cpu/dnnl_cpu.h"
#include "backend/cpu/vec.h"

void cpu_repeat_row(real *Z, const real *row, int H, int V)
{
#pragma omp parallel for schedule(static) if (cpu_team(H, (long)H * V))
    for (int h = 0; h < H; h++) memcpy(Z + (size_t)h * V, row, sizeof(real) * V);
}

/* t_k = max(t~_2k + b_2k, t~_2k+1 + b_2k+1); which_k records the winner for backward. */
static void maxout_row(real *t, unsigned char *which, const real *tt, const real *b, int l)
{
    for (int k = 0; k < l; k++) {
        real a = tt[2 * k] + b[2 * k], c = tt[2 * k + 1] + b[2 * k + 1];
        if (which) which[k] = c > a;
        t[k] = c > a ? c : a;
    }
}

void cpu_maxout(real *t, unsigned char *which, const real *tt, const real *b, const int *rows, int N, int l)
{
#pragma omp parallel for schedule(static) if (cpu_team(N, 2L * N * l))
    for (int r = 0; r < N; r++) {
        size_t row = rows ? (size_t)rows[r] : (size_t)r;
        maxout_row(t + (size_t)r * l, which ? which + row * l : NULL, tt + row * 2 * l, b, l);
    }
}

void cpu_maxout_backward(real *dtt, const real *dt, const unsigned char *which, const int *rows, int N, int l)
{
    for (int r = 0; r < N; r++) {
        size_t row = rows ? (size_t)rows[r] : (size_t)r;
        real *d = dtt + row * 2 * l;
        const unsigned char *wh = which + row * l;
        for (int k = 0; k < l; k++) d[2 * k + wh[k]] = dt[(size_t)r * l + k];
    }
}

/* Σ_k z_k in double, in the order of k */
static double row_sum(const real *z, int V)
{
    double s = 0;
    for (int k = 0; k < V; k++) s += z[k];
    return s;
}

void cpu_softmax_nll(real *z, double *rinv, double *nll, real *lp, const int *rows, const int *y, int N, int V,
                     double ls)
{
#pragma omp parallel for schedule(static) if (cpu_team(N, (long)N * V))
    for (int r = 0; r < N; r++) { /* the row keeps e^{z - max} for backward */
        real *zr = z + (size_t)r * V;
        int row = rows ? rows[r] : r;
        real zy = zr[y[row]];
        double sum, zsum = ls > 0 ? row_sum(zr, V) : 0; /* read before the row becomes e^{z - max} */
        real lse = vec_logsumexp(zr, zr, V, &sum), l = zy - lse;
        rinv[r] = 1 / sum;
        if (lp) lp[row] = l;
        nll[r] = -(double)l;
        /* (1/V) Σ_k -log p(k) = lse - (1/V) Σ_k z_k */
        if (ls > 0) nll[r] = (1 - ls) * nll[r] + ls * ((double)lse - zsum / V);
    }
}

void cpu_softmax_nll_backward(real *z, real *dbias, real *part, const double *rinv, const int *rows,
                              const int *y, int N, int V, real scale, real ls, int blk, uint16_t *z16)
{
    /* the bias gradient's column sums, and bf16 training's rounding of the row, are taken in the
     * same pass while each row is in cache (rounded by the products instead, the N x V rows
     * were read from memory twice more: SMALL's bf16 readout backward took about 15% longer,
     * docs/results/lowp.md, "bf16 training: speed"); without
     * smoothing u is 0 and hit is scale, so that v - u and the target's term are the plain
     * one-hot's bit for bit */
    int nblk = (N + blk - 1) / blk;
    real u = scale * ls / (real)V, hit = scale * (1 - ls);
#pragma omp parallel for schedule(static) if (cpu_team(nblk, (long)N * V))
    for (int q = 0; q < nblk; q++) {
        real *pq = part + (size_t)q * V;
        memset(pq, 0, sizeof(real) * V);
        for (int r = q * blk; r < N && r < (q + 1) * blk; r++) {
            real *zr = z + (size_t)r * V, f = (real)(scale * rinv[r]);
            for (int k = 0; k < V; k++) {
                real v = zr[k] * f - u;
                zr[k] = v;
                pq[k] += v;
            }
            int t = y[rows ? rows[r] : r];
            zr[t] -= hit;
            pq[t] -= hit;
            if (z16) dnnl_cpu_bf16_span(z16 + (size_t)r * V, zr, (size_t)V);
        }
    }
    for (int q = 0; q < nblk; q++) vec_axpy(dbias, 1, part + (size_t)q * V, V);
}

void cpu_gather_rows(real *dst, const real *table, const int *ids, int n, int cols)
{
    for (int i = 0; i < n; i++) {
        real *d = dst + (size_t)i * cols;
        if (ids[i] < 0) memset(d, 0, sizeof(real) * cols);
        else memcpy(d, table + (size_t)ids[i] * cols, sizeof(real) * cols);
    }
}

void cpu_gather_cols(real *dst, const real *src, const int *ids, int n, int rows, long sj, long sk)
{
    for (int k = 0; k < rows; k++)
        for (int j = 0; j < n; j++) dst[(size_t)k * n + j] = src[(size_t)ids[j] * sj + (size_t)k * sk];
}

void cpu_scatter_rows(real *table, const real *src, const int *ids, int n, int cols)
{
    for (int i = 0; i < n; i++) memcpy(table + (size_t)ids[i] * cols, src + (size_t)i * cols, sizeof(real) * cols);
}

void cpu_scatter_add_rows(real *table, const real *src, const int *ids, const unsigned char *mask, int n, int cols)
{
    /* serial: rows of one word meet in one destination, summed in the order of i */
    for (int i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        real *d = table + (size_t)(ids ? ids[i] : i) * cols;
        const real *s = src + (size_t)i * cols;
        for (int k = 0; k < cols; k++) d[k] += s[k];
    }
}
