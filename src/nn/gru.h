/* gru.h: one time step of the GRU of MODEL.md sections 1-2 for a batch of rows, forward and
 * backward. Input-side pre-activations (W x + C c + b ...) are computed by the caller, for all
 * time steps at once where it can; the cell adds the recurrent products. */
#ifndef NMT_GRU_H
#define NMT_GRU_H

#include "backend/backend.h"
#include "base/real.h"

/* What backward needs from one step, each [B, n] with row stride n. */
typedef struct gru_cache { real *z, *r, *hc, *rh; } gru_cache;

/* h[B,n] (stride ldh) from hp[B,n] (stride ldhp; NULL = the zero state) and pre-activations
 * a[B,3n] (stride lda) = [z | r | candidate]. U [n,2n] = U_z|U_r, Uh [n,n].
 * mask[b] == 0 makes row b copy its previous state (padding); mask NULL = all rows real.
 * dm [B,n] (dense): the dropout mask the recurrent products read hp through (NULL: none); the
 * cache's rh is then r∘hp∘dm. tmp: scratch of 3n*B reals. */
void gru_forward(const bk_ctx *x, real *h, int ldh, gru_cache c, const real *a, int lda, const real *hp, int ldhp,
                 bk_weight U, bk_weight Uh, const unsigned char *mask, const real *dm, int B, int n, real *tmp);

/* Given dh[B,n] (the whole gradient reaching h_t), writes da[B,3n] (stride ldda, the gradient of
 * the pre-activations) and ADDS the gradient of hp into dhp[B,n]. Recurrent weight gradients are
 * left to the caller, who forms them for all steps in one product each:
 * dU += (hp∘dm)^T · da[:, 0:2n] (gru_drop_states), dUh += rh^T · da[:, 2n:3n]. hp NULL = the zero
 * state; dm as in gru_forward. tmp: scratch of n*B reals, 3n*B with dm. */
void gru_backward(const bk_ctx *x, real *da, int ldda, real *dhp, const real *dh, gru_cache c, const real *hp, int ldhp,
                  const real *U, const real *Uh, const unsigned char *mask, const real *dm, int B, int n, real *tmp);

/* y = h∘dm for T steps of B rows of n (step t's rows at t·B·ld): the states the recurrent
 * products read, for the weight gradient's one product over all steps. */
void gru_drop_states(const bk_ctx *x, real *y, int ldy, const real *h, int ldh, const real *dm, int T, int B, int n);

#endif
