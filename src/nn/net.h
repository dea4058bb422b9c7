/* net.h: a whole model over a minibatch: encoder, decoder and readout run forward for the loss
 * and backward for the gradient of every parameter. The workspace is sized for the largest
 * batch seen and reused, so training allocates nothing per batch once it is warm. */
#ifndef NMT_NET_H
#define NMT_NET_H

#include "data/batch_dev.h"
#include "nn/decoder.h"
#include "nn/encoder.h"
#include "nn/guide.h"
#include "nn/readout.h"
#include "nn/transformer.h"

/* The training-only terms besides the maxout dropout (docs/TRAINING.md): label smoothing ε of
 * the loss, and variational dropout (one mask per sentence, the same at every position) on the
 * source and target embeddings and on the state each GRU's recurrent products read. Like that
 * dropout they apply only while a dropout RNG is set (training), never at validation or
 * translation. All 0: the plain model, bit for bit. */
typedef struct net_reg {
    double label_smoothing, dropout_emb, dropout_rnn;
    /* the Transformer's (Marian's --transformer-dropout, -attention, -ffn): on every block's
     * output and the embeddings, on the attention weights, inside the feed-forward */
    double dropout_tf, dropout_attn, dropout_ffn;
} net_reg;

typedef struct net_ws {
    ws_block blk;            /* one allocation, laid out for batches up to blk.cap = {B, Tx, Ty} */
    enc_ws enc;
    dec_ws dec;
    out_ws out;
    tf_ws tf;                /* a Transformer's (nn/transformer.h); the three above are a recurrent model's */
    double tf_ls;            /* the label smoothing of its last forward */
    net_reg reg;             /* net_set_reg */
    /* the variational dropout masks of a batch, drawn by net_forward on the host (h*) and
     * uploaded: */
    real *mask_src, *mask_tgt; /* [B, m] the embeddings' */
    real *mask_h[3];         /* [B, n] the encoder's forward and backward GRUs', the decoder's */
    real *hmask;             /* host: the five, one after another as on the device */
    batch_dev bd;            /* the batch's arrays on the device */
    batch view;              /* the batch net_forward ran, its dev_* fields on bd (for backward) */
    real *logp;              /* [Ty*B] device: per-token log-probabilities, copied out on request */
    /* guided alignment (nn/guide.h), the caller's; off while either is NULL or out of training mode */
    guide_ws *guide;
    const batch_links *links; /* the next batch's rows' links (host) */
} net_ws;

/* Lays the workspace out for batches up to B x Tx x Ty (re-allocating only when it grows).
 * Returns NMT_OK or NMT_ERR_NOMEM. */
int net_ws_reserve(const bk_ctx *x, net_ws *w, const nmt_config *c, int B, int Tx, int Ty, nmt_err *err);
void net_ws_free(net_ws *w);
/* Bytes a workspace for B x Tx x Ty would take (for refusing configurations up front). */
size_t net_ws_bytes(const nmt_config *c, int B, int Tx, int Ty);

/* Training mode: dropout p on the maxout output (p = 0 turns it off) and the terms of net_set_reg,
 * masks drawn from r, which the caller owns (the trainer saves it in checkpoints); r NULL is the
 * model as it translates (validation). */
static inline void net_set_dropout(net_ws *w, double p, rng *r) { w->out.dropout = p; w->out.drop_rng = r; }
static inline void net_set_reg(net_ws *w, const net_reg *reg) { w->reg = *reg; }
/* Guided alignment in training mode: g's cost on the links the caller names before each
 * net_forward (net_set_links, rows in the batch's order); g NULL: off. */
static inline void net_set_guide(net_ws *w, guide_ws *g) { w->guide = g; }
static inline void net_set_links(net_ws *w, const batch_links *l) { w->links = l; }

/* Teacher-forced forward: returns the summed NLL of the batch's real target tokens (the
 * batch cost of MODEL.md section 2 is this / B; in training mode with label smoothing, the
 * summed smoothed loss); logp_tok optional [Ty*B]. */
double net_forward(const bk_ctx *x, net_ws *w, const nmt_config *c, const params *p, const batch *bt, real *logp_tok);
/* FertDec's costs of the last net_forward, summed over sentences and weighted (0 for other
 * models); the training loss is scale · (summed NLL + this). */
static inline double net_extra_cost(const net_ws *w, const nmt_config *c) { return dec_extra_cost(&w->dec, c); }
/* Guided alignment's weighted cost λ Σ G of the last net_forward (0 when it did not guide); the
 * training loss is then scale · (summed NLL + net_extra_cost + this). */
static inline double net_guided_cost(const net_ws *w) { return w->guide && w->guide->active ? w->guide->weight * w->guide->cost : 0; }
/* The attention of the last net_forward into out [Ty, B, Tx] (host, time-major): a recurrent
 * model's α; a Transformer's last decoder layer's encoder-decoder weights, its heads' mean.
 * NMT_ERR_NOMEM when the host copy cannot be made. */
int net_attention_host(const bk_ctx *x, const net_ws *w, const nmt_config *c, const batch *bt, real *out);

/* Backward of scale · (summed NLL + net_extra_cost + net_guided_cost), after net_forward on the same batch; ADDS
 * into g. */
void net_backward(const bk_ctx *x, net_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt, real scale);

#endif
