/* ensemble.h: several models with the same vocabularies decoding as one (the ensembles of Marian,
 * OpenNMT-py and Nematus). Each model keeps its own workspace and recurrent state, so models of
 * different architectures can be ensembled; at every step the score of a next word is
 * Σ_k w_k log p_k(word), the weights summing to 1. An ensemble of one model hands the search
 * that model's logits as they are: its arithmetic is a single model's, bit for bit. */
#ifndef NMT_ENSEMBLE_H
#define NMT_ENSEMBLE_H

#include "decode/infer.h"

typedef struct infer_ens {
    int n;                  /* models, >= 1 */
    const nmt_model **m;    /* [n] */
    real *wt;               /* [n] weights summing to 1 (not read when n == 1) */
    infer_ws *w;            /* [n] the models' workspaces */
    int n_att;              /* models with attention */
    int owned;              /* m, wt and w are the ensemble's (ens_init), not borrowed (ens_one) */
    ws_block blk;           /* n > 1: the buffers below, laid out for {-, Tx, H} */
    real *z;                /* [H, Ky] the combined log-probabilities */
    real *alpha;            /* [H, Tx] the mean attention (n_att > 1) */
    real *ascale;           /* [H] 1 / n_att, the weight of each attention row in the mean */
    real *hascale;          /* host: the same, written there and uploaded */
    /* the output layers (ens_output; NULL: FP32 over the whole vocabulary) and the shortlist */
    struct out_layer *out;  /* [n] */
    const struct nmt_shortlist *sl;
    int *ids;               /* [Ky] the batch's shortlist (ens_select) */
    unsigned char *mark;    /* [Ky] its scratch */
    int V;                  /* columns of the scores: the shortlist's size, or Ky */
    const int *vocab;       /* [V] the target id of each column; NULL: the identity */
    /* what the last ens_step leaves for the search */
    const real *scores;     /* [H, V]: the model's logits (n == 1), else log-probabilities */
    int logp;               /* scores are log-probabilities already (topk_rows's logp) */
    const real *att;        /* [H, Tx]: attention rows (zero when no model has attention) */
} infer_ens;

/* the context every model of e shares (ens_init checks that they do) */
static inline const bk_ctx *ens_ctx(const infer_ens *e) { return &e->m[0]->cx; }

/* An ensemble of m[0..n): weights NULL (equal) or n positive finite numbers, normalised to sum
 * to 1. The models must outlive it. NMT_ERR_ARG for a bad weight, NMT_ERR_NOMEM. */
int ens_init(infer_ens *e, const nmt_model *const *m, const double *weights, int n, nmt_err *err);
/* One model over the caller's workspace and model pointer (*m must outlive it): nothing to free. */
infer_ens ens_one(const nmt_model **m, infer_ws *w);
void ens_free(infer_ens *e);
/* Every model's output layer in precision prec (enum bk_prec) and, with sl, over a shortlist
 * chosen per batch (ens_select); replaces the previous ones. Nothing when prec is FP32 and sl
 * NULL: out_step's layer, as before. NMT_ERR_ARG when the CPU lacks prec, NMT_ERR_NOMEM. */
int ens_output(infer_ens *e, int prec, const struct nmt_shortlist *sl, nmt_err *err);
/* on: every model's FP32 products compute each row alone (nmt_translate_opts.batch_invariant) */
void ens_rows(infer_ens *e, int on);
/* With a shortlist: the set of the batch src, with the target words extra[0..nextra), becomes the
 * scores' columns (e->V, e->vocab, ascending). */
int ens_select(infer_ens *e, const batch *src, const int *extra, int nextra, nmt_err *err);

/* A hypothesis's state row: the models' rows side by side (infer_state_dim each). */
int ens_state_dim(const infer_ens *e, int Tx);
/* Room for S sentences of up to Tx words, H rows and Ty steps. */
int ens_reserve(infer_ens *e, int S, int Tx, int H, int Ty, nmt_err *err);
/* After the search kept rows: row i continues old row parent[i] (device) in every model. */
void ens_reorder(const infer_ens *e, const int *parent, int n);
void ens_encode(infer_ens *e, const batch *src);
/* S state rows of ens_state_dim: each sentence's initial state in every model. */
void ens_init_states(infer_ens *e, real *state, int S, int Tx);
/* infer_step for every model over its part of the state rows, then the combined scores and
 * attention into e->scores and e->att. */
void ens_step(infer_ens *e, const batch *src, int H, const int *src_of, const int *yprev, const real *st_prev,
              real *st_new);

#endif
