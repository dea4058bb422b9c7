/* infer.h: the model at translation time: encode a batch of source sentences once, then advance
 * any set of hypotheses (rows), each reading one of those sentences, by one target word. No
 * caches for backward are kept; the workspace is sized once for the largest batch. */
#ifndef NMT_INFER_H
#define NMT_INFER_H

#include "backend/backend.h"
#include "data/batch.h"
#include "data/batch_dev.h"
#include "nn/encoder.h"
#include "nn/model.h"
#include "decode/tf_infer.h"

typedef struct infer_ws {
    ws_block blk;        /* one allocation for up to blk.cap = {S sentences, Tx, H rows} */
    enc_ws enc;          /* encoder of up to S sentences */
    real *UaH;           /* [Tx*S, n'] */
    real *s0;            /* [S, n] */
    real *Q, *alpha, *ctx, *pre, *E, *tt, *t; /* per row: n', Tx, c, 3n, m, 2l, l */
    real *logits;        /* [H, Ky] the step's logits (out_step: not normalised) */
    gru_cache cache;     /* [H, n] each (written, not read back) */
    real *tmp;           /* [H, 3n] */
    real *xi;            /* [H, Tx, K] Markov / LocFer features */
    int *idx;            /* [3, H] device: a step's rows' sentences, previous words, source lengths */
    int *hidx;           /* host: the same, built there and uploaded */
    batch_dev bd;        /* the sentences' arrays on the device */
    batch view;          /* the batch infer_encode ran, its dev_* fields on bd */
    real *d0;            /* [S, m] FertDec: d_1 of each sentence */
    real *g, *th;        /* [H, m], [H, n] FertDec's extract gate and tanh(V_h d) */
    const struct out_layer *out; /* the output layer's precision and columns (decode/outlayer.h), or
                                  * NULL: out_step's, FP32 over the whole vocabulary; in lower
                                  * precision its weights (out->lw) serve the step's products too */
    tf_infer tf;         /* a Transformer's (decode/tf_infer.h); the fields above are a recurrent model's */
    int blas;            /* 1: FP32 products by the backend's gemm (the BLAS, whose rows depend on
                          * their batch); 0 (zeroed): by gemm_rows, each row alone */
} infer_ws;

/* A hypothesis's recurrent state is one row (a Transformer's: one unused entry, its state being the
 * cache that infer_reorder moves): [s_i (n) | c_i (c) if RecAtt/InputFeed | α_i (Tx)
 * if Markov | Σα (Tx) if LocFer | d_i (m) if FertDec], so that beam search can copy states
 * without knowing what the variant keeps. The initial row is [s_0 | 0 ... | d_1]. */
int infer_state_dim(const nmt_config *c, int Tx);
/* Fills S rows, ld apart (ld >= dim), with each sentence's initial state (after infer_encode). */
void infer_init_states(const bk_ctx *x, const infer_ws *w, const nmt_config *c, real *state, int ld, int S, int Tx);

/* Room for S sentences of up to Tx words, H rows and Ty target positions (the search's longest). */
int infer_reserve(const bk_ctx *x, infer_ws *w, const nmt_config *c, int S, int Tx, int H, int Ty, nmt_err *err);
void infer_free(infer_ws *w);

/* Encodes src (its y fields are not read) and computes s_0 of each sentence into w->s0. */
void infer_encode(infer_ws *w, const nmt_model *m, const batch *src);

/* One step for H rows: row h reads sentence src_of[h], previous word yprev[h] (-1: ȳ_0 = 0,
 * the first step) and state rows st_prev (H rows of dim, ld apart: an ensemble keeps its
 * models' states side by side in one row); writes st_new (the same layout), w->logits [H,Ky]
 * and w->alpha [H,Tx] (zero for RNNencdec, which has no attention). With w->out, the logits are
 * [H, w->out->Vs] over its chosen columns. */
void infer_step(infer_ws *w, const nmt_model *m, const batch *src, int H, const int *src_of, const int *yprev,
                const real *st_prev, real *st_new, int ld);

/* The rows the search keeps after a step: row i continues old row parent[i] (device), i < n. The
 * state rows are the caller's to gather; this moves what the model keeps besides them (a
 * Transformer's key/value cache; nothing for a recurrent model). */
void infer_reorder(infer_ws *w, const nmt_model *m, const int *parent, int n);

#endif
