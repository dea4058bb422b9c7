/* gru.c: the GRU step (MODEL.md section 1, reset gate applied before U):
 *   z = σ(a_z + U_z h), r = σ(a_r + U_r h), h~ = tanh(a_h + U (r∘h)), h' = h + z∘(h~ - h)
 * Backward, with g = dL/dh':
 *   dz = g∘(h~ - h), dh~ = g∘z, dh += g∘(1 - z)
 *   da_h = dh~∘(1 - h~²), dq = da_h·U^T (q = r∘h), dr = dq∘h, dh += dq∘r
 *   da_z = dz∘z(1 - z), da_r = dr∘r(1 - r), dh += [da_z | da_r]·[U_z | U_r]^T */
#include <string.h>

#include "backend/cpu/blas.h"
#include "base/fault.h"
#include "nn/gru.h"
#include "backend/cpu/vec.h"

void gru_forward(real *h, int ldh, gru_cache c, const real *a, int lda, const real *hp, int ldhp,
                 const real *U, const real *Uh, const unsigned char *mask, int B, int n, real *tmp)
{
    real *zr = tmp, *uq = tmp + (size_t)2 * n * B;
    if (hp) mm(0, 0, B, 2 * n, n, hp, ldhp, U, 2 * n, 0, zr, 2 * n);
    else memset(zr, 0, sizeof(real) * 2 * n * B);
    for (int b = 0; b < B; b++) {
        const real *ab = a + (size_t)b * lda, *zrb = zr + (size_t)b * 2 * n;
        const real *hpb = hp ? hp + (size_t)b * ldhp : NULL;
        real *zb = c.z + (size_t)b * n, *rb = c.r + (size_t)b * n, *rhb = c.rh + (size_t)b * n;
        for (int k = 0; k < n; k++) { zb[k] = ab[k] + zrb[k]; rb[k] = ab[n + k] + zrb[n + k]; }
        vec_sigmoid(zb, zb, n);
        vec_sigmoid(rb, rb, n);
        for (int k = 0; k < n; k++) rhb[k] = hpb ? rb[k] * hpb[k] : 0;
    }
    if (hp) mm(0, 0, B, n, n, c.rh, n, Uh, n, 0, uq, n);
    else memset(uq, 0, sizeof(real) * n * B);
    for (int b = 0; b < B; b++) {
        const real *ab = a + (size_t)b * lda, *uqb = uq + (size_t)b * n;
        const real *hpb = hp ? hp + (size_t)b * ldhp : NULL;
        real *zb = c.z + (size_t)b * n, *hcb = c.hc + (size_t)b * n, *hb = h + (size_t)b * ldh;
        int real_row = !mask || mask[b];
        for (int k = 0; k < n; k++) hcb[k] = ab[2 * n + k] + uqb[k];
        vec_tanh(hcb, hcb, n);
        for (int k = 0; k < n; k++) {
            real prev = hpb ? hpb[k] : 0;
            hb[k] = real_row ? prev + zb[k] * (hcb[k] - prev) : prev;
        }
    }
}

void gru_backward(real *da, int ldda, real *dhp, const real *dh, gru_cache c, const real *hp, int ldhp,
                  const real *U, const real *Uh, const unsigned char *mask, int B, int n, real *tmp)
{
    real *dq = tmp;
    for (int b = 0; b < B; b++) {
        const real *g = dh + (size_t)b * n, *hpb = hp ? hp + (size_t)b * ldhp : NULL;
        const real *zb = c.z + (size_t)b * n, *hcb = c.hc + (size_t)b * n;
        real *dab = da + (size_t)b * ldda, *dhpb = dhp + (size_t)b * n;
        if (mask && !mask[b]) { /* padding copied h: the gradient passes straight through */
            memset(dab, 0, sizeof(real) * 3 * n);
            if (!FAULT(FAULT_ENC_CARRY))
                for (int k = 0; k < n; k++) dhpb[k] += g[k];
            continue;
        }
        for (int k = 0; k < n; k++) {
            real prev = hpb ? hpb[k] : 0;
            real dz = g[k] * (hcb[k] - prev);
            dhpb[k] += g[k] * (1 - zb[k]);
            dab[2 * n + k] = g[k] * zb[k] * (1 - hcb[k] * hcb[k]);
            dab[k] = dz * zb[k] * (1 - zb[k]);
        }
    }
    if (!hp) { /* h_0 = 0 is a constant: r and U receive nothing, and there is no dhp to fill */
        for (int b = 0; b < B; b++) memset(da + (size_t)b * ldda + n, 0, sizeof(real) * n);
        return;
    }
    mm(0, 1, B, n, n, da + 2 * n, ldda, Uh, n, 0, dq, n);
    for (int b = 0; b < B; b++) {
        if (mask && !mask[b]) continue;
        const real *hpb = hp + (size_t)b * ldhp, *rb = c.r + (size_t)b * n, *dqb = dq + (size_t)b * n;
        real *dab = da + (size_t)b * ldda, *dhpb = dhp + (size_t)b * n;
        for (int k = 0; k < n; k++) {
            if (!FAULT(FAULT_GRU_RESET_PATH)) dhpb[k] += dqb[k] * rb[k];
            dab[n + k] = dqb[k] * hpb[k] * rb[k] * (1 - rb[k]);
        }
    }
    mm(0, 1, B, n, 2 * n, da, ldda, U, 2 * n, 1, dhp, n);
}
