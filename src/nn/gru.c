/* gru.c: the GRU step (MODEL.md section 1, reset gate applied before U):
 *   z = σ(a_z + U_z h), r = σ(a_r + U_r h), h~ = tanh(a_h + U (r∘h)), h' = h + z∘(h~ - h)
 * Backward, with g = dL/dh':
 *   dz = g∘(h~ - h), dh~ = g∘z, dh += g∘(1 - z)
 *   da_h = dh~∘(1 - h~²), dq = da_h·U^T (q = r∘h), dr = dq∘h, dh += dq∘r
 *   da_z = dz∘z(1 - z), da_r = dr∘r(1 - r), dh += [da_z | da_r]·[U_z | U_r]^T
 * The products run here; the element-wise parts are the backend's gru_* kernels. */
#include "backend/backend.h"
#include "nn/gru.h"

void gru_forward(real *h, int ldh, gru_cache c, const real *a, int lda, const real *hp, int ldhp,
                 const real *U, const real *Uh, const unsigned char *mask, int B, int n, real *tmp)
{
    const backend_ops *bk = backend();
    real *zr = tmp, *uq = tmp + (size_t)2 * n * B;
    if (hp) mm(0, 0, B, 2 * n, n, hp, ldhp, U, 2 * n, 0, zr, 2 * n);
    else bk->zero_rows(zr, 2 * n, B, 2 * n);
    bk->gru_gates(c.z, c.r, c.rh, a, lda, zr, hp, ldhp, B, n);
    if (hp) mm(0, 0, B, n, n, c.rh, n, Uh, n, 0, uq, n);
    else bk->zero_rows(uq, n, B, n);
    bk->gru_state(h, ldh, c.hc, c.z, a + 2 * n, lda, uq, hp, ldhp, mask, B, n);
}

void gru_backward(real *da, int ldda, real *dhp, const real *dh, gru_cache c, const real *hp, int ldhp,
                  const real *U, const real *Uh, const unsigned char *mask, int B, int n, real *tmp)
{
    const backend_ops *bk = backend();
    real *dq = tmp;
    bk->gru_grad_state(da, ldda, dhp, dh, c.z, c.hc, hp, ldhp, mask, B, n);
    if (!hp) { /* h_0 = 0 is a constant: r and U receive nothing, and there is no dhp to fill */
        bk->zero_rows(da + n, ldda, B, n);
        return;
    }
    mm(0, 1, B, n, n, da + 2 * n, ldda, Uh, n, 0, dq, n);
    bk->gru_grad_reset(da, ldda, dhp, dq, c.r, hp, ldhp, mask, B, n);
    mm(0, 1, B, n, 2 * n, da, ldda, U, 2 * n, 1, dhp, n);
}
