/* ssru.h: Marian's simpler simple recurrent unit (SSRU, Kim et al. 2019, "From research to
 * production and back"; marian-dev src/rnn/cells.h), which a Transformer decoder of a converted
 * Marian model has in place of self-attention (nmt_config.ssru): one position forward (decoding
 * and training), and the backward of a whole sequence. */
#ifndef NMT_SSRU_H
#define NMT_SSRU_H

#include "backend/backend.h"

/* One position for R rows of d units: from g = a·[W | W_f] (stride ldg, no bias) and the
 * previous cell c_prev (stride ldp; NULL: zero), f = σ(g_f + bf) (stride ldf), c = f ∘ c_prev +
 * (1 − f) ∘ g_W (written as g_W + f ∘ (c_prev − g_W); stride ldc) and h = relu(c) (stride ldh).
 * tmp is scratch [R, d]; one [R] holds 1. */
void ssru_step(const bk_ctx *x, real *c, int ldc, real *h, int ldh, const real *g, int ldg, const real *bf, const real *cprev,
               int ldp, real *f, int ldf, real *tmp, const real *one, int R, int d);

/* The backward of T positions of B sequences, rows batch-major (row b*T + t), all [B*T, ·]
 * dense: from dh (the outputs' gradient, [·, d]), the cells c and gates f the forward kept and
 * its g ([·, 2d]), writes dg [·, 2d] (the gradient of g = a·[W | W_f], bias b_f's share in its
 * right half). dc and dd are scratch [B*T, d]; one [B*T] holds 1. dh may be dc. */
void ssru_backward(const bk_ctx *x, real *dg, const real *dh, const real *c, const real *f, const real *g, real *dc, real *dd,
                   const real *one, int B, int T, int d);

#endif
