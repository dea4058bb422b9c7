/* ssru.h: Marian's simpler simple recurrent unit (SSRU, Kim et al. 2019, "From research to
 * production and back"; marian-dev src/rnn/cells.h), which a Transformer decoder of a converted
 * Marian model has in place of self-attention (nmt_config.ssru). Forward only: nmt decodes,
 * scores and aligns with such models but does not train them. */
#ifndef NMT_SSRU_H
#define NMT_SSRU_H

#include "backend/backend.h"

/* One position for R rows of d units: from g = a·[W | W_f] (stride ldg, no bias) and the
 * previous cell c_prev (stride ldp; NULL: zero), f = σ(g_f + bf), c = f ∘ c_prev + (1 − f) ∘ g_W
 * (written as g_W + f ∘ (c_prev − g_W); stride ldc) and h = relu(c) (stride ldh). f and tmp are
 * scratch [R, d]; one [R] holds 1. */
void ssru_step(const bk_ctx *x, real *c, int ldc, real *h, int ldh, const real *g, int ldg, const real *bf, const real *cprev,
               int ldp, real *f, real *tmp, const real *one, int R, int d);

#endif
