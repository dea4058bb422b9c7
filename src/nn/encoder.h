/* encoder.h: the source side (MODEL.md sections 1 and 3): embeddings, then a bidirectional GRU
 * (RNNsearch) or a forward GRU (RNNencdec), over a padded batch. */
#ifndef NMT_ENCODER_H
#define NMT_ENCODER_H

#include "backend/arena.h"
#include "data/batch.h"
#include "nn/gru.h"
#include "nn/model.h"

typedef struct enc_ws {
    int ndir;              /* directions: 2 or 1 */
    real *ex;              /* [Tx*B, m]  embedded source */
    real *X[2];            /* [Tx*B, 3n] input pre-activations per direction (bias included) */
    real *H;               /* [Tx*B, ndir*n] annotations [h→ ; h←] (RNNencdec: h→) */
    gru_cache cache[2];    /* each field [Tx*B, n] */
    int step_cache;        /* decoding (no backward): every step writes its gate values over the
                            * same [B, n] rows, so that the rest of cache is never touched */
    unsigned char *mask;   /* [Tx*B] 1 at real positions */
    unsigned char *hmask;  /* host: the same, built there and uploaded */
    /* training's variational dropout (net_forward; NULL: none), one mask per sentence for every
     * position: */
    const real *drop_emb;  /* [B, m] on the source embeddings */
    const real *drop_h[2]; /* [B, n] per direction, on the state the recurrent products read */
    /* backward */
    real *dH;              /* [Tx*B, ndir*n] gradient reaching the annotations (filled by the decoder) */
    real *dA[2];           /* [Tx*B, 3n] */
    real *dex;             /* [Tx*B, m] */
    real *carry[2], *dh[2]; /* [B, n] per direction: the two directions run side by side */
    real *tmp[2];          /* [B, 3n] per direction */
} enc_ws;

void enc_layout(enc_ws *w, arena *a, const nmt_config *c, int B, int Tx);
void enc_forward(const bk_ctx *x, enc_ws *w, const nmt_config *c, const params *p, const batch *bt);
/* Reads w->dH (and, with drop_h, overwrites it once read); ADDS parameter gradients into g. */
void enc_backward(const bk_ctx *x, enc_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt);

#endif
