/* tf_infer.h: a Transformer at translation time: the encoder once per batch, its keys and values
 * of every decoder layer projected once per sentence and read by all of that sentence's
 * hypotheses, then one target position per step for any set of hypotheses, each keeping its
 * decoder layers' keys and values of earlier positions in a cache that the search reorders. */
#ifndef NMT_TF_INFER_H
#define NMT_TF_INFER_H

#include "nn/transformer.h"

typedef struct tf_infer {
    tf_ws enc;            /* the encoder's workspace (tf_encode), for S sentences */
    int S, Tx, H, Tmax;   /* the room: sentences, source length, rows, target positions */
    int t;                /* the next position: positions 0 .. t-1 are in the cache */
    real *kv[NMT_MAX_DEPTH]; /* [S*Tx, 2d] each decoder layer's encoder keys | values */
    real *cache, *spare;  /* [H, Tmax, L, 2d]: per row, position, layer: key | value (an SSRU
                           * decoder's: its cell c, then unused room) */
    real *x, *y, *n, *st, *q, *ctx, *tmp, *pre, *P, *Pc; /* a step's rows */
    real *ones;           /* [heads] 1/heads: the mean of the heads' attention */
    real *one;            /* [H] ones, an SSRU decoder's (NULL otherwise) */
    real *pos;            /* [Tmax, d] the sinusoid */
    real *scale;          /* [H] √d */
    real *hconst;         /* host: the three above, staged */
} tf_infer;

/* lays t out in a for S sentences of Tx, H rows and Tmax positions */
void tf_infer_layout(tf_infer *t, arena *a, const nmt_config *c, int S, int Tx, int H, int Tmax);
/* after the block is allocated: the constant rows (scale, sinusoid, 1/heads) uploaded */
void tf_infer_ready(const bk_ctx *x, tf_infer *t, const nmt_config *c);
void tf_infer_encode(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, const batch *src);
/* One position for H rows: row h reads sentence src_of[h] (device), previous word yprev[h]
 * (device, -1 first), source length rowlen[h] (device); writes alpha [H, Tx] (nmt_config's
 * alignment layer and head; by default the last layer's heads' mean) and returns the decoder's
 * top rows [H, d], the output layer's input (t's room, valid until the next step). The weights
 * p's typed view gives (int8, bf16) or FP32. */
const real *tf_infer_step(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int H, const int *src_of,
                          const int *yprev, const int *rowlen, real *alpha);
/* The output layer over the whole vocabulary in FP32: logits [H, Ky] of the top rows. (In
 * int8, bf16 or over a shortlist the search's decode/outlayer.c does it.) */
void tf_infer_logits(const bk_ctx *x, const nmt_config *c, const params *p, const real *top, int H, real *logits);
/* The rows the search keeps: row i of the cache becomes old row parent[i] (device), i < n. */
void tf_infer_reorder(const bk_ctx *x, tf_infer *t, const nmt_config *c, const int *parent, int n);

#endif
