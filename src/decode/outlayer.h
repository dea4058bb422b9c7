/* outlayer.h: the decoder's output layer at translation time, z = t·W_o + b_w (MODEL.md section
 * 2), in FP32 or with W_o converted once to int8 or bf16 (backend.h, "products in lower
 * precision"), over the whole target vocabulary or over a shortlist's columns gathered per
 * batch into memory sized once. In lower precision the model's converted weights (nn/weights.h,
 * made once per model and shared by every decoder) serve W_o and the step's other products
 * (params.tw, which infer.c hands the step).
 * Allocation: all at init and reserve, none per step but oneDNN's own handles in each product
 * (memory objects over our buffers); in lower precision with a shortlist, the chosen columns'
 * conversion (a bk_qmat) is made once per batch. */
#ifndef NMT_OUTLAYER_H
#define NMT_OUTLAYER_H

#include "backend/backend.h"
#include "nn/model.h"
#include "nn/weights.h"

typedef struct out_layer {
    int prec;             /* enum bk_prec */
    const bk_ctx *cx;     /* the model's context: its backend */
    int l, V, tied;       /* maxout units, target vocabulary; W_o is Ey^T */
    const real *W;        /* W_o [l, V]; tied: Et [V, l] */
    const real *bias;     /* b_w [V] */
    const model_lowp *lw; /* lower precision: the model's converted weights, W_o's among them */
    bk_qws *qws;          /* converted activations of up to qrows rows */
    int qrows;
    int sl;               /* a shortlist is used: the columns below */
    int Vs;               /* the columns of the logits: the last out_select's, or V */
    real *Ws, *bs;        /* the chosen columns of W_o [l, Vs] (FP32 tied: rows of Et, [Vs, l]) and of b_w */
    bk_qmat *qs;          /* lower precision over Ws */
    int *hids, *dids;     /* [V] host and device: the columns being gathered */
} out_layer;

/* The output layer of m in precision prec (enum bk_prec), m's weights converted into it when no
 * decoder has yet asked for them; shortlist: room for out_select.
 * NMT_ERR_ARG when m's backend cannot run prec, NMT_ERR_NOMEM. */
int out_init(out_layer *o, const nmt_model *m, int prec, int shortlist, nmt_err *err);
void out_free(out_layer *o);
/* room for steps of H rows (sized once, grown when a larger batch comes) */
int out_reserve(out_layer *o, int H, nmt_err *err);
/* The logits' columns become target ids ids[0..n), ascending: W_o's columns and b_w gathered
 * (and, in lower precision, converted) once per batch. */
int out_select(out_layer *o, const int *ids, int n, nmt_err *err);
/* z [H, Vs] = t [H, l] · W_o + b_w over the chosen columns; in FP32 the same products as
 * out_step (nn/readout.h), so that the whole vocabulary as a shortlist changes no bit. */
void out_logits(const bk_ctx *x, const out_layer *o, real *z, const real *t, int H);

#endif
