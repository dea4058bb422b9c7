/* net.c: the model's forward and backward passes over a minibatch, read bottom-up: encoder,
 * decoder, readout, then the same in reverse (MODEL.md sections 1-3). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nn/net.h"
#include "base/prof.h"

static size_t layout(void *ws, char *base, const nmt_config *c, const int *d)
{
    net_ws *w = ws;
    arena a = {base, 0};
    enc_layout(&w->enc, &a, c, d[0], d[1]);
    dec_layout(&w->dec, &a, c, d[0], d[1], d[2]);
    out_layout(&w->out, &a, c, d[0], d[2]);
    /* last, so that the buffers above keep their offsets */
    w->mask_src = arena_take(&a, sizeof(real) * d[0] * c->emb);
    w->mask_tgt = arena_take(&a, sizeof(real) * d[0] * c->emb);
    for (int k = 0; k < 3; k++) w->mask_h[k] = arena_take(&a, sizeof(real) * d[0] * c->hid);
    return a.used;
}

size_t net_ws_bytes(const nmt_config *c, int B, int Tx, int Ty)
{
    net_ws tmp;
    int d[3] = {B, Tx, Ty};
    return layout(&tmp, NULL, c, d);
}

int net_ws_reserve(net_ws *w, const nmt_config *c, int B, int Tx, int Ty, nmt_err *err)
{
    int want[3] = {B, Tx, Ty};
    return ws_reserve(&w->blk, want, layout, w, c, "training", err);
}

void net_ws_free(net_ws *w)
{
    if (!w) return;
    ws_block_free(&w->blk);
    memset(w, 0, sizeof *w);
}

/* The training-only terms of this batch: on in training mode (a dropout RNG set), each mask
 * drawn once for the batch, in this order and before the maxout output's (the order is part of
 * a run's results); off (NULL, 0) at validation. */
static void net_training_terms(net_ws *w, const nmt_config *c, const batch *bt)
{
    rng *r = w->out.drop_rng;
    const net_reg *g = &w->reg;
    size_t be = (size_t)bt->B * c->emb, bh = (size_t)bt->B * c->hid;
    int emb = r && g->dropout_emb > 0, rnn = r && g->dropout_rnn > 0;
    w->enc.drop_emb = emb ? rng_dropout_mask(r, w->mask_src, be, g->dropout_emb) : NULL;
    w->dec.drop_emb = emb ? rng_dropout_mask(r, w->mask_tgt, be, g->dropout_emb) : NULL;
    for (int d = 0; d < 2; d++)
        w->enc.drop_h[d] = rnn && d < w->enc.ndir ? rng_dropout_mask(r, w->mask_h[d], bh, g->dropout_rnn) : NULL;
    w->dec.drop_h = rnn ? rng_dropout_mask(r, w->mask_h[2], bh, g->dropout_rnn) : NULL;
    w->out.smoothing = r ? g->label_smoothing : 0;
}

/* The layout is for blk.cap, but every kernel indexes with the batch's own B, Tx
 * and Ty: buffers are used as [Tx*B, ...] prefixes of the reserved ones. */
double net_forward(net_ws *w, const nmt_config *c, const params *p, const batch *bt, real *logp_tok)
{
    net_training_terms(w, c, bt);
    PROF_BEGIN(t0);
    enc_forward(&w->enc, c, p, bt);
    PROF_END(PROF_ENC_FWD, t0);
    PROF_BEGIN(t1);
    dec_forward(&w->dec, &w->enc, c, p, bt); /* attention time is booked separately inside */
    PROF_END(PROF_DEC_FWD, t1);
    PROF_BEGIN(t2);
    double loss = out_forward(&w->out, &w->dec, c, p, bt, logp_tok);
    PROF_END(PROF_OUT_FWD, t2);
    return loss;
}

void net_backward(net_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt, real scale)
{
    int hd = w->enc.ndir * c->hid;
    backend()->zero_rows(w->enc.dH, hd, bt->Tx * bt->B, hd);
    PROF_BEGIN(t0);
    out_backward(&w->out, &w->dec, c, p, g, bt, scale);
    PROF_END(PROF_OUT_BWD, t0);
    PROF_BEGIN(t1);
    dec_backward(&w->dec, &w->enc, c, p, g, bt, scale);
    PROF_END(PROF_DEC_BWD, t1);
    PROF_BEGIN(t2);
    enc_backward(&w->enc, c, p, g, bt);
    PROF_END(PROF_ENC_BWD, t2);
}
