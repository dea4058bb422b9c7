/* readout.h: the deep output with maxout and the softmax over the target vocabulary (MODEL.md
 * section 2), with the masked negative log-likelihood loss. All time steps of a batch go
 * through each product at once; the softmax layer sees only the real (unpadded) positions. */
#ifndef NMT_READOUT_H
#define NMT_READOUT_H

#include "backend/arena.h"
#include "data/batch.h"
#include "nn/decoder.h"
#include "nn/model.h"
#include "base/rng.h"

/* rows per block of the bias gradient's partial sums: fixed, so that the sum's order does not
 * depend on the thread count */
#define OUT_BLOCK 64

typedef struct out_ws {
    int N;                 /* real target tokens in the batch */
    int *rows;             /* [Ty*B] row index i*B+b of each real token, i-major as the reference */
    real *TT;              /* [Ty*B, 2l] t~_i */
    unsigned char *which;  /* [Ty*B, l]  which of the pair won (for backward) */
    real *Tg;              /* [N, l]    t_i of real tokens */
    real *logits;          /* [N, Ky]   the logits z; softmax_nll turns each row into e^{z - max z}, backward into dL/dz */
    double *rsum;          /* [N]       1 / Σ_k e^{z_k - max z}: p = logits · rsum once softmax_nll ran */
    real *bias_part;       /* [Ty*B / OUT_BLOCK + 1, Ky] the bias gradient's per-block sums */
    real *dTg;             /* [N, l] */
    double *nll;           /* [N] per-token NLL, summed in order for a thread-independent loss */
    real *mask;            /* [N, l] dropout mask: 0 or 1/(1-p) */
    int *hrows;            /* host: rows, built there and uploaded */
    double *hnll;          /* host: nll read back */
    real *hmask;           /* host: mask, drawn there and uploaded */
    double dropout;        /* p; 0 = off (translation, validation) */
    double smoothing;      /* label smoothing ε of this batch; 0 = off (net_forward sets it) */
    rng *drop_rng;         /* where masks come from while dropout is on */
} out_ws;

/* One decoding step for H hypothesis rows: z [H,Ky] = the softmax layer's logits W_o t_i + b_w,
 * not normalised (log p = z - logsumexp z, which the caller forms while it scans the row), from
 * s [H,n], E [H,m] (ȳ_{i-1}) and ctx [H,c]; tt [H,2l] and t [H,l] are scratch. */
void out_step(const bk_ctx *x, real *z, real *tt, real *t, const real *s, const real *E, const real *ctx, const nmt_config *c,
              const params *p, int H);

/* out_step's maxout layer alone, t [H,l] (tt [H,2l] scratch), its products by p's weights in
 * their own type (params.tw): the hook of a decoder that forms the logits itself
 * (decode/outlayer.h: lower precision, a shortlist's columns). */
void out_step_hidden(const bk_ctx *x, real *tt, real *t, const real *s, const real *E, const real *ctx, const nmt_config *c,
                     const params *p, int H);

void out_layout(out_ws *w, arena *a, const nmt_config *c, int B, int Ty);

/* Returns Σ -log p(y_i) over real tokens (with w->smoothing ε > 0, the smoothed loss of each
 * token instead); logp_tok (optional, [Ty*B]) receives log p(y_i) at real positions and 0 at
 * padding. */
double out_forward(const bk_ctx *x, out_ws *w, const dec_ws *d, const nmt_config *c, const params *p, const batch *bt,
                   real *logp_tok);
/* Loss = scale · Σ -log p (smoothed as in out_forward). ADDS into g; WRITES d->dS, d->dC, d->dEprev. */
void out_backward(const bk_ctx *x, out_ws *w, dec_ws *d, const nmt_config *c, const params *p, params *g, const batch *bt,
                  real scale);

#endif
