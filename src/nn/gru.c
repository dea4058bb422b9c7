/* gru.c: the GRU step (MODEL.md section 1, reset gate applied before U):
 *   z = σ(a_z + U_z h), r = σ(a_r + U_r h), h~ = tanh(a_h + U (r∘h)), h' = h + z∘(h~ - h)
 * Backward, with g = dL/dh':
 *   dz = g∘(h~ - h), dh~ = g∘z, dh += g∘(1 - z)
 *   da_h = dh~∘(1 - h~²), dq = da_h·U^T (q = r∘h), dr = dq∘h, dh += dq∘r
 *   da_z = dz∘z(1 - z), da_r = dr∘r(1 - r), dh += [da_z | da_r]·[U_z | U_r]^T
 * Variational dropout on the recurrent state (Gal and Ghahramani 2016; docs/TRAINING.md): with a
 * mask m, the recurrent products read h∘m wherever h is written above inside U_z, U_r and U,
 * while the update h' = h + z∘(h~ - h) keeps h itself; backward then sums the products' share
 * of dh (the terms through U_z|U_r and dq∘r) times m.
 * The products run here; the element-wise parts are the backend's gru_* kernels. */
#include "backend/backend.h"
#include "base/fault.h"
#include "nn/gru.h"

void gru_forward(const bk_ctx *x, real *h, int ldh, gru_cache c, const real *a, int lda, const real *hp, int ldhp,
                 bk_weight U, bk_weight Uh, const unsigned char *mask, const real *dm, int B, int n, real *tmp)
{
    const backend_ops *bk = x->b;
    real *zr = tmp, *uq = tmp + (size_t)2 * n * B;
    const real *hr = hp; /* the state the recurrent products read: h, or h∘m in uq's place until uq is due */
    int ldr = ldhp;
    if (hp && dm) {
        bk->mul_rows(uq, n, hp, ldhp, dm, n, B, n);
        hr = uq;
        ldr = n;
    }
    if (hp) mmw(x, B, 2 * n, n, hr, ldr, U, 0, zr, 2 * n);
    else bk->zero_rows(zr, 2 * n, B, 2 * n);
    bk->gru_gates(c.z, c.r, c.rh, a, lda, zr, hr, ldr, B, n);
    if (hp) mmw(x, B, n, n, c.rh, n, Uh, 0, uq, n);
    else bk->zero_rows(uq, n, B, n);
    bk->gru_state(h, ldh, c.hc, c.z, a + 2 * n, lda, uq, hp, ldhp, mask, B, n);
}

void gru_backward(const bk_ctx *x, real *da, int ldda, real *dhp, const real *dh, gru_cache c, const real *hp, int ldhp,
                  const real *U, const real *Uh, const unsigned char *mask, const real *dm, int B, int n, real *tmp)
{
    const backend_ops *bk = x->b;
    real *dq = tmp;
    bk->gru_grad_state(da, ldda, dhp, dh, c.z, c.hc, hp, ldhp, mask, B, n);
    if (!hp) { /* h_0 = 0 is a constant: r and U receive nothing, and there is no dhp to fill */
        bk->zero_rows(da + n, ldda, B, n);
        return;
    }
    const real *hr = hp; /* as in forward; the products' share of dh goes to dhr */
    int ldr = ldhp;
    real *dhr = dhp;
    if (dm) {
        real *hd = tmp + (size_t)n * B;
        dhr = tmp + (size_t)2 * n * B;
        bk->mul_rows(hd, n, hp, ldhp, dm, n, B, n);
        bk->zero_rows(dhr, n, B, n);
        hr = hd;
        ldr = n;
    }
    mm(x, 0, 1, B, n, n, da + 2 * n, ldda, Uh, n, 0, dq, n);
    bk->gru_grad_reset(da, ldda, dhr, dq, c.r, hr, ldr, mask, B, n);
    mm(x, 0, 1, B, n, 2 * n, da, ldda, U, 2 * n, 1, dhr, n);
    if (dm) { /* d(h∘m)/dh = m */
        if (!FAULT(FAULT_DROP_RNN)) bk->mul_rows(dhr, n, dhr, n, dm, n, B, n);
        bk->add_rows(dhp, n, dhp, n, dhr, n, B, n);
    }
}

void gru_drop_states(const bk_ctx *x, real *y, int ldy, const real *h, int ldh, const real *dm, int T, int B, int n)
{
    for (int t = 0; t < T; t++)
        x->b->mul_rows(y + (size_t)t * B * ldy, ldy, h + (size_t)t * B * ldh, ldh, dm, n, B, n);
}
