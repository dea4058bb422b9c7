/* transformer.h: the Transformer family over a minibatch (docs/MODEL-MAP.md, "The Transformer
 * family"): embeddings with positions, the encoder and decoder stacks, the output layer and its
 * loss, forward and backward. net.c drives it through the same calls as the recurrent network. */
#ifndef NMT_TRANSFORMER_H
#define NMT_TRANSFORMER_H

#include <stdint.h>

#include "backend/arena.h"
#include "data/batch.h"
#include "nn/model.h"

/* One block (an attention or a feed-forward sublayer with its norm and residual sum): pre-norm
 * keeps n = LN(x_in), the sublayer's input; post-norm n = x_in + drop(o), the norm's input. */
typedef struct tf_blk {
    real *n, *st;    /* [R, d], the norm's statistics [R, 2] */
    real *mask;      /* [R, d] residual dropout, or NULL when off */
    real *mbuf;      /* the room mask points into when on */
} tf_blk;

/* An attention sublayer's caches: its projections, weights before and after dropout, heads. */
typedef struct tf_attc {
    real *q, *kv;    /* self: q [R, 3d] holds Q|K|V; cross: q [Ry, d], kv [Rx, 2d] */
    real *P, *Pd;    /* [B, heads, Tq, Tk]; Pd = P ∘ mask (Pd == P without attention dropout) */
    real *mask, *mbuf; /* attention dropout's, or NULL; its room */
    real *ctx;       /* [R, d] the heads side by side */
} tf_attc;

typedef struct tf_ffnc {
    real *pre, *act; /* [R, f]: a·W1 + b1, and act(pre) ∘ mask */
    real *mask, *mbuf; /* [R, f] or NULL; its room */
} tf_ffnc;

/* One layer: encoder (blocks self, ffn) or decoder (self, ctx, ffn). */
typedef struct tf_lay {
    tf_blk blk[3];
    tf_attc self, ctx;
    tf_ffnc ffn;
} tf_lay;

/* The dropout of a batch in training mode (0: off) and the seed of its masks. */
typedef struct tf_drop {
    double res, attn, ffn;
    uint64_t seed;
} tf_drop;

typedef struct tf_ws {
    int B, Tx, Ty;          /* the batch tf_forward ran */
    tf_drop drop;
    /* the residual streams: X[0] the embeddings, X[k+1] after block k; side 0 the encoder's
     * (2 blocks a layer), 1 the decoder's (3) */
    real *X[2][3 * TF_MAX_DEPTH + 1];
    real *emask[2], *ebuf[2]; /* [R, d] the embeddings' dropout, or NULL; its room */
    tf_lay lay[2][TF_MAX_DEPTH];
    real *top[2], *top_st[2]; /* pre-norm: LN_top of the last stream [R, d], [R, 2]; post: the stream */
    /* the batch's index arrays, built on the host (h*) and uploaded in one copy */
    int *ids[2], *pos[2];   /* [R] batch-major: source ids; previous target ids (-1 first); positions */
    int *rows_tm, *rows_bm; /* [N] each real target token's time-major and batch-major row */
    int *idx, *hidx;
    int N;
    real *scale, *hscale;   /* [max R] √d, the embeddings' scale (axpy_diff_rows' per-row factor) */
    real *sin, *hsin;       /* [max T, d] sinusoidal positions */
    real *one, *hone;       /* [max R] ones, an SSRU decoder's (nmt_config.ssru; NULL otherwise) */
    /* the output layer */
    real *F, *logits;       /* [N, d] the top rows of real tokens, [N, Ky] */
    double *nll, *rsum, *hnll;
    real *bias_part;
    /* backward's scratch */
    real *G, *GS, *dA, *DO; /* [max R, d] */
    real *dq, *dkv, *dH;    /* [max R, 3d], [Rx, 2d], [Rx, d] */
    real *dctx, *dP, *dpre, *gx; /* [max R, d], [B, h, T, T], [max R, f], [max R, max(d, f)] */
    real *tmp;              /* [max R, max(3d, f)] the sublayers' outputs and products */
    /* guided alignment's gradient, set by net.c before tf_backward (NULL: none): λ·scale·∂G/∂P
     * [B, Ty, Tx] of head ga_head of decoder layer ga_layer's encoder-decoder attention */
    const real *ga;
    int ga_layer, ga_head;
} tf_ws;

/* Lays w out in a for batches up to B x Tx x Ty. */
void tf_layout(tf_ws *w, arena *a, const nmt_config *c, int B, int Tx, int Ty);

/* The encoder alone on bt (its y NULL when decoding): w->top[TF_ENC] [B*Tx, d] batch-major. */
void tf_encode(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, const batch *bt, const tf_drop *drop);
/* Teacher-forced forward of bt (its dev_* arrays on the device): the summed NLL of the real
 * target tokens (with label smoothing ls > 0 the smoothed loss); logp (device, [Ty*B]
 * time-major, optional) each token's log-probability. drop NULL: no dropout (validation). */
double tf_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, const batch *bt, real *logp,
                  const tf_drop *drop, double ls);
/* Backward of scale · that loss after tf_forward on the same batch; ADDS into g. */
void tf_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt, real scale,
                 double ls);

/* The decoder layer (0-based) whose encoder-decoder attention gives a model's alignments
 * (nmt_config.align_layer; 0: the last), and the head guided alignment trains there
 * (align_head; 0: head 0, as Marian's and Garg et al.'s) */
static inline int tf_align_layer(const nmt_config *c) { return c->align_layer ? c->align_layer - 1 : c->dec_depth - 1; }
static inline int tf_guided_head(const nmt_config *c) { return c->align_head ? c->align_head - 1 : 0; }
/* Head k of decoder layer l's encoder-decoder weights P of the last tf_forward into out
 * [B, Ty, Tx] (device) */
void tf_head_probs(const bk_ctx *x, const tf_ws *w, const nmt_config *c, int l, int k, real *out);

/* The weight k of layer l of side s in p (its typed form where p has a view) */
bk_weight tf_weight(const params *p, int s, int l, int k);
static inline real *tf_t(const params *p, int s, int l, int k) { return p->tf[s][l][k]; }

/* The sinusoidal positions 0 .. T-1 of size d into out [T, d] (Marian's layout: sines then
 * cosines) */
void tf_sinusoid(real *out, int T, int d);

#endif
