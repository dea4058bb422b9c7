/* net.c: the model's forward and backward passes over a minibatch, read bottom-up: encoder,
 * decoder, readout, then the same in reverse (MODEL.md sections 1-3). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nn/net.h"
#include "base/prof.h"

/* the five dropout masks, [B, m] twice then [B, n] three times, in one block */
static size_t masks_len(const nmt_config *c, int B) { return (size_t)B * (2 * c->emb + 3 * c->hid); }

static void layout(void *ws, arena *ap, const nmt_config *c, const int *d)
{
    net_ws *w = ws;
    if (is_transformer(c)) {
        tf_layout(&w->tf, ap, c, d[0], d[1], d[2]);
        batch_dev_layout(&w->bd, ap, d[0], d[1], d[2]);
        w->logp = arena_take(ap, sizeof(real) * d[0] * d[2]);
        return;
    }
    enc_layout(&w->enc, ap, c, d[0], d[1]);
    dec_layout(&w->dec, ap, c, d[0], d[1], d[2]);
    out_layout(&w->out, ap, c, d[0], d[2]);
    /* last, so that the buffers above keep their offsets */
    size_t be = (size_t)d[0] * c->emb, bh = (size_t)d[0] * c->hid;
    w->mask_src = arena_take(ap, sizeof(real) * masks_len(c, d[0]));
    w->mask_tgt = w->mask_src ? w->mask_src + be : NULL;
    for (int k = 0; k < 3; k++) w->mask_h[k] = w->mask_src ? w->mask_src + 2 * be + k * bh : NULL;
    w->hmask = arena_take_host(ap, sizeof(real) * masks_len(c, d[0]));
    batch_dev_layout(&w->bd, ap, d[0], d[1], d[2]);
    w->logp = arena_take(ap, sizeof(real) * d[0] * d[2]);
}

size_t net_ws_bytes(const nmt_config *c, int B, int Tx, int Ty)
{
    net_ws tmp;
    int d[3] = {B, Tx, Ty};
    arena a = {0};
    layout(&tmp, &a, c, d);
    return a.used + a.hused;
}

int net_ws_reserve(const bk_ctx *x, net_ws *w, const nmt_config *c, int B, int Tx, int Ty, nmt_err *err)
{
    int want[3] = {B, Tx, Ty};
    return ws_reserve(x, &w->blk, want, layout, w, c, "training", err);
}

void net_ws_free(net_ws *w)
{
    if (!w) return;
    ws_block_free(&w->blk);
    memset(w, 0, sizeof *w);
}

/* The training-only terms of this batch: on in training mode (a dropout RNG set), each mask
 * drawn once for the batch on the host, in this order and before the maxout output's (the order
 * is part of a run's results), and uploaded in one copy; off (NULL, 0) at validation. */
static void net_training_terms(const bk_ctx *x, net_ws *w, const nmt_config *c, const batch *bt)
{
    rng *r = w->out.drop_rng;
    const net_reg *g = &w->reg;
    size_t be = (size_t)bt->B * c->emb, bh = (size_t)bt->B * c->hid, cap_e = (size_t)w->blk.cap[0] * c->emb;
    size_t cap_h = (size_t)w->blk.cap[0] * c->hid;
    int emb = r && g->dropout_emb > 0, rnn = r && g->dropout_rnn > 0;
    real *h = w->hmask;
    w->enc.drop_emb = emb ? (rng_dropout_mask(r, h, be, g->dropout_emb), w->mask_src) : NULL;
    w->dec.drop_emb = emb ? (rng_dropout_mask(r, h + cap_e, be, g->dropout_emb), w->mask_tgt) : NULL;
    for (int d = 0; d < 2; d++)
        w->enc.drop_h[d] = rnn && d < w->enc.ndir
                               ? (rng_dropout_mask(r, h + 2 * cap_e + d * cap_h, bh, g->dropout_rnn), w->mask_h[d])
                               : NULL;
    w->dec.drop_h = rnn ? (rng_dropout_mask(r, h + 2 * cap_e + 2 * cap_h, bh, g->dropout_rnn), w->mask_h[2]) : NULL;
    if (emb || rnn) x->b->copy_in(w->mask_src, h, sizeof(real) * masks_len(c, w->blk.cap[0]));
    w->out.smoothing = r ? g->label_smoothing : 0;
}

/* The layout is for blk.cap, but every kernel indexes with the batch's own B, Tx
 * and Ty: buffers are used as [Tx*B, ...] prefixes of the reserved ones. */
/* A Transformer's forward: its dropout and label smoothing in training mode (a dropout RNG set),
 * the masks' seed drawn from that RNG, so that a resumed run draws them again. */
static double tf_net_forward(const bk_ctx *x, net_ws *w, const nmt_config *c, const params *p, real *logp_tok)
{
    rng *r = w->out.drop_rng;
    const net_reg *g = &w->reg;
    tf_drop drop = {g->dropout_tf, g->dropout_attn, g->dropout_ffn, r ? rng_u64(r) : 0};
    w->tf_ls = r ? g->label_smoothing : 0;
    const batch *bt = &w->view;
    double loss = tf_forward(x, &w->tf, c, p, bt, logp_tok ? w->logp : NULL, r ? &drop : NULL, w->tf_ls);
    if (w->guide) w->guide->active = 0;
    if (w->guide && w->links && r) { /* training mode only */
        guide_ws *gd = w->guide;
        gd->batch_major = 1; /* a head's weights are [B, Ty, Tx]; gathered into dA, which backward rewrites whole */
        tf_head_probs(x, &w->tf, c, tf_align_layer(c), tf_guided_head(c), gd->dA);
        guide_forward(x, gd, gd->dA, bt, w->links);
    }
    if (logp_tok) x->b->copy_out(logp_tok, w->logp, sizeof(real) * bt->Ty * bt->B);
    return loss;
}

double net_forward(const bk_ctx *x, net_ws *w, const nmt_config *c, const params *p, const batch *host_bt, real *logp_tok)
{
    batch_upload(x, &w->view, host_bt, &w->bd);
    if (is_transformer(c)) return tf_net_forward(x, w, c, p, logp_tok);
    const batch *bt = &w->view;
    net_training_terms(x, w, c, bt);
    PROF_BEGIN(t0);
    enc_forward(x, &w->enc, c, p, bt);
    PROF_END(PROF_ENC_FWD, t0);
    PROF_BEGIN(t1);
    dec_forward(x, &w->dec, &w->enc, c, p, bt); /* attention time is booked separately inside */
    PROF_END(PROF_DEC_FWD, t1);
    if (w->guide) w->guide->active = 0;
    if (w->guide && w->links && w->out.drop_rng && has_attention(c)) /* training mode only */
        guide_forward(x, w->guide, w->dec.alpha, bt, w->links);
    PROF_BEGIN(t2);
    double loss = out_forward(x, &w->out, &w->dec, c, p, bt, logp_tok ? w->logp : NULL);
    PROF_END(PROF_OUT_FWD, t2);
    if (logp_tok) x->b->copy_out(logp_tok, w->logp, sizeof(real) * bt->Ty * bt->B);
    return loss;
}

void net_backward(const bk_ctx *x, net_ws *w, const nmt_config *c, const params *p, params *g, const batch *host_bt, real scale)
{
    (void)host_bt; /* the batch net_forward uploaded, still on the device */
    const batch *bt = &w->view;
    if (is_transformer(c)) {
        int gd = w->guide && w->guide->active;
        w->tf.ga = gd ? guide_backward(x, w->guide, bt, w->links, scale) : NULL;
        w->tf.ga_layer = tf_align_layer(c), w->tf.ga_head = tf_guided_head(c);
        tf_backward(x, &w->tf, c, p, g, bt, scale, w->tf_ls);
        return;
    }
    int hd = w->enc.ndir * c->hid;
    x->b->zero_rows(w->enc.dH, hd, bt->Tx * bt->B, hd);
    PROF_BEGIN(t0);
    out_backward(x, &w->out, &w->dec, c, p, g, bt, scale);
    PROF_END(PROF_OUT_BWD, t0);
    int gd = w->guide && w->guide->active;
    w->dec.ga = gd ? guide_backward(x, w->guide, bt, w->links, scale) : NULL;
    w->dec.ga_tmp = gd ? w->guide->tmp : NULL;
    PROF_BEGIN(t1);
    dec_backward(x, &w->dec, &w->enc, c, p, g, bt, scale);
    PROF_END(PROF_DEC_BWD, t1);
    PROF_BEGIN(t2);
    enc_backward(x, &w->enc, c, p, g, bt);
    PROF_END(PROF_ENC_BWD, t2);
}

int net_attention_host(const bk_ctx *x, const net_ws *w, const nmt_config *c, const batch *bt, real *out)
{
    int B = bt->B, Ty = bt->Ty, Tx = bt->Tx, h = c->heads;
    if (!is_transformer(c)) {
        x->b->copy_out(out, w->dec.alpha, sizeof(real) * Ty * B * Tx);
        return NMT_OK;
    }
    size_t n = (size_t)B * h * Ty * Tx;
    real *P = malloc(sizeof(real) * n);
    if (!P) return NMT_ERR_NOMEM;
    /* the layer and head the config names (nmt_config.align_layer, align_head) */
    int layer = tf_align_layer(c), k0 = c->align_head ? c->align_head - 1 : 0;
    int nh = c->align_head ? 1 : h;
    x->b->copy_out(P, w->tf.lay[TF_DEC][layer].ctx.P, sizeof(real) * n);
    for (int t = 0; t < Ty; t++)
        for (int b = 0; b < B; b++)
            for (int j = 0; j < Tx; j++) {
                double s = 0; /* the heads in order */
                for (int k = k0; k < k0 + nh; k++) s += P[(((size_t)b * h + k) * Ty + t) * Tx + j];
                out[((size_t)t * B + b) * Tx + j] = (real)(s / nh);
            }
    free(P);
    return NMT_OK;
}
