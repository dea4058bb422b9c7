/* ssru.c: one position of Marian's SSRU (ssru.h) from the backend's element-wise kernels:
 * f = σ(a W_f + b_f), c_t = f ∘ c_{t−1} + (1 − f) ∘ a W, h_t = relu(c_t)
 * (ref: marian-dev src/rnn/cells.h, class SSRU, and its highway op). */
#include "nn/ssru.h"

void ssru_step(const bk_ctx *x, real *c, int ldc, real *h, int ldh, const real *g, int ldg, const real *bf, const real *cprev,
               int ldp, real *f, real *tmp, const real *one, int R, int d)
{
    const backend_ops *bk = x->b;
    bk->act_rows(BK_SIGMOID, f, d, g + d, ldg, bf, R, d);
    /* tmp = c_prev − g_W (a zero c_prev read from tmp itself, zeroed) */
    bk->zero_rows(tmp, d, R, d);
    bk->axpy_diff_rows(tmp, d, one, cprev ? cprev : tmp, cprev ? ldp : d, g, ldg, R, d);
    bk->mul_rows(tmp, d, tmp, d, f, d, R, d);
    bk->add_rows(c, ldc, g, ldg, tmp, d, R, d);
    bk->act_rows(BK_RELU, h, ldh, c, ldc, NULL, R, d);
}
