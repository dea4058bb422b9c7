/* ssru.c: Marian's SSRU (ssru.h) from the backend's element-wise kernels:
 *   f_t = σ(a_t W_f + b_f), c_t = f_t ∘ c_{t−1} + (1 − f_t) ∘ a_t W, h_t = relu(c_t), c_{−1} = 0
 * (ref: marian-dev src/rnn/cells.h, class SSRU, and its highway op). Backward, with
 * δc_t = δh_t ∘ 1[c_t > 0] + f_{t+1} ∘ δc_{t+1}:
 *   δ(a_t W) = δc_t ∘ (1 − f_t), δ(a_t W_f + b_f) = δc_t ∘ (c_{t−1} − a_t W) ∘ f_t (1 − f_t). */
#include "base/fault.h"
#include "nn/ssru.h"

void ssru_step(const bk_ctx *x, real *c, int ldc, real *h, int ldh, const real *g, int ldg, const real *bf, const real *cprev,
               int ldp, real *f, int ldf, real *tmp, const real *one, int R, int d)
{
    const backend_ops *bk = x->b;
    bk->act_rows(BK_SIGMOID, f, ldf, g + d, ldg, bf, R, d);
    /* tmp = c_prev − g_W (a zero c_prev read from tmp itself, zeroed) */
    bk->zero_rows(tmp, d, R, d);
    bk->axpy_diff_rows(tmp, d, one, cprev ? cprev : tmp, cprev ? ldp : d, g, ldg, R, d);
    bk->mul_rows(tmp, d, tmp, d, f, ldf, R, d);
    bk->add_rows(c, ldc, g, ldg, tmp, d, R, d);
    bk->act_rows(BK_RELU, h, ldh, c, ldc, NULL, R, d);
}

void ssru_backward(const bk_ctx *x, real *dg, const real *dh, const real *c, const real *f, const real *g, real *dc, real *dd,
                   const real *one, int B, int T, int d)
{
    const backend_ops *bk = x->b;
    int R = B * T, ld = T * d;
    bk->act_grad_x_rows(BK_RELU, dc, d, dh, d, c, d, R, d);
    /* the carry from later positions, last first: δc_t += f_{t+1} ∘ δc_{t+1} */
    for (int t = T - 2; t >= 0 && !FAULT(FAULT_TF_SSRU); t--) {
        bk->mul_rows(dd, d, f + (long)(t + 1) * d, ld, dc + (long)(t + 1) * d, ld, B, d);
        bk->add_rows(dc + (long)t * d, ld, dc + (long)t * d, ld, dd, d, B, d);
    }
    /* δ(a W) = δc − δc ∘ f */
    bk->mul_rows(dd, d, dc, d, f, d, R, d);
    bk->zero_rows(dg, 2 * d, R, d);
    bk->axpy_diff_rows(dg, 2 * d, one, dc, d, dd, d, R, d);
    /* dd = c_{t−1} − a W (c_{−1} = 0), then δc ∘ dd, then through the sigmoid */
    bk->zero_rows(dd, d, R, d);
    bk->axpy_diff_rows(dd, d, one, dd, d, g, 2 * d, R, d);
    if (T > 1) bk->add_rows(dd + d, ld, dd + d, ld, c, ld, B, (T - 1) * d);
    bk->mul_rows(dd, d, dd, d, dc, d, R, d);
    bk->act_grad_rows(BK_SIGMOID, dg + d, 2 * d, dd, d, f, d, R, d);
}
