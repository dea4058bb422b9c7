/* outlayer.h: the decoder's output layer at translation time, z = t·W_o + b_w (MODEL.md section
 * 2), in FP32 or with W_o converted once to int8 or bf16 (backend.h, "products in lower
 * precision"), over the whole target vocabulary or over a shortlist's columns gathered per
 * batch into memory sized once; and, in lower precision, the step's other weights converted
 * once too (the set that nn/step.c and nn/readout.c multiply through while infer.c makes it current,
 * backend.h bk_prec_use).
 * Allocation: all at init and reserve, none per step but oneDNN's own handles in each product
 * (memory objects over our buffers); in lower precision with a shortlist, the chosen columns'
 * conversion (a bk_qmat) is made once per batch. */
#ifndef NMT_OUTLAYER_H
#define NMT_OUTLAYER_H

#include "backend/backend.h"
#include "nn/model.h"

typedef struct out_layer {
    int prec;             /* enum bk_prec */
    int l, V, tied;       /* maxout units, target vocabulary; W_o is Ey^T */
    const real *W;        /* W_o [l, V]; tied: Et [V, l] */
    const real *bias;     /* b_w [V] */
    real *Wt;             /* tied, lower precision: Et^T [l, V], what q converts (and reads for FP32 fallback) */
    bk_qmat *q;           /* lower precision over the whole vocabulary */
    bk_qws *qws;          /* converted activations of up to qrows rows */
    int qrows;
    int sl;               /* a shortlist is used: the columns below */
    int Vs;               /* the columns of the logits: the last out_select's, or V */
    real *Ws, *bs;        /* the chosen columns of W_o [l, Vs] (FP32 tied: rows of Et, [Vs, l]) and of b_w */
    bk_qmat *qs;          /* lower precision over Ws */
    bk_qset step;         /* lower precision: the other weights a step multiplies by (empty in FP32) */
    int *hids, *dids;     /* [V] host and device: the columns being gathered */
} out_layer;

/* The output layer of m in precision prec (enum bk_prec), and the step's weights in it;
 * shortlist: room for out_select.
 * NMT_ERR_ARG when prec does not run on this CPU, NMT_ERR_NOMEM. */
int out_init(out_layer *o, const nmt_model *m, int prec, int shortlist, nmt_err *err);
void out_free(out_layer *o);
/* room for steps of H rows (sized once, grown when a larger batch comes) */
int out_reserve(out_layer *o, int H, nmt_err *err);
/* The logits' columns become target ids ids[0..n), ascending: W_o's columns and b_w gathered
 * (and, in lower precision, converted) once per batch. */
int out_select(out_layer *o, const int *ids, int n, nmt_err *err);
/* z [H, Vs] = t [H, l] · W_o + b_w over the chosen columns; in FP32 the same products as
 * out_step (nn/readout.h), so that the whole vocabulary as a shortlist changes no bit. */
void out_logits(const out_layer *o, real *z, const real *t, int H);

#endif
