/* infer.c: translation-time forward pass (MODEL.md sections 1-3): the same equations as
 * encoder.c, decoder.c and readout.c, for rows that each follow their own hypothesis. */
#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "backend/backend.h"
#include "nn/decoder.h"
#include "nn/step.h"
#include "base/err.h"
#include "nn/gru.h"
#include "decode/infer.h"
#include "decode/outlayer.h"
#include "nn/readout.h"

/* the target positions a reservation asked for (ws_reserve passes three dimensions) */
static void layout(void *ws, arena *ap, const nmt_config *c, const int *d)
{
    infer_ws *w = ws;
    int S = d[0], Tx = d[1], H = d[2];
    if (is_transformer(c)) {
        tf_infer_layout(&w->tf, ap, c, S, Tx, H, w->tf.Tmax);
        w->logits = arena_take(ap, sizeof(real) * H * c->tgt_vocab);
        w->alpha = arena_take(ap, sizeof(real) * H * Tx);
        w->idx = arena_take(ap, sizeof(int) * 3 * H);
        w->hidx = arena_take_host(ap, sizeof(int) * 3 * H);
        batch_dev_layout(&w->bd, ap, S, Tx, 0);
        return;
    }
    size_t n = c->hid, na = c->att, cd = ctx_dim(c), m = c->emb, l = c->maxout;
    enc_layout(&w->enc, ap, c, S, Tx);
    w->enc.step_cache = 1; /* decoding never runs the encoder backward */
    w->UaH = arena_take(ap, sizeof(real) * Tx * S * na);
    w->s0 = arena_take(ap, sizeof(real) * S * n);
    w->Q = arena_take(ap, sizeof(real) * H * na);
    w->alpha = arena_take(ap, sizeof(real) * H * Tx);
    w->ctx = arena_take(ap, sizeof(real) * H * cd);
    w->pre = arena_take(ap, sizeof(real) * H * 3 * n);
    w->E = arena_take(ap, sizeof(real) * H * m);
    w->tt = arena_take(ap, sizeof(real) * H * 2 * l);
    w->t = arena_take(ap, sizeof(real) * H * l);
    w->logits = arena_take(ap, sizeof(real) * H * c->tgt_vocab);
    w->cache.z = arena_take(ap, sizeof(real) * H * n);
    w->cache.r = arena_take(ap, sizeof(real) * H * n);
    w->cache.hc = arena_take(ap, sizeof(real) * H * n);
    w->cache.rh = arena_take(ap, sizeof(real) * H * n);
    w->tmp = arena_take(ap, sizeof(real) * H * 3 * n);
    w->xi = xi_kind(c) ? arena_take(ap, sizeof(real) * H * Tx * xi_width(c)) : NULL;
    w->idx = arena_take(ap, sizeof(int) * 3 * H);
    w->hidx = arena_take_host(ap, sizeof(int) * 3 * H);
    batch_dev_layout(&w->bd, ap, S, Tx, 0);
    w->d0 = has_fertdec(c) ? arena_take(ap, sizeof(real) * S * m) : NULL;
    w->g = has_fertdec(c) ? arena_take(ap, sizeof(real) * H * m) : NULL;
    w->th = has_fertdec(c) ? arena_take(ap, sizeof(real) * H * n) : NULL;
}

int infer_reserve(const bk_ctx *x, infer_ws *w, const nmt_config *c, int S, int Tx, int H, int Ty, nmt_err *err)
{
    int want[3] = {S, Tx, H};
    if (!is_transformer(c)) return ws_reserve(x, &w->blk, want, layout, w, c, "decoding", err);
    /* the cache's positions are a fourth dimension: a longer limit lays the block out anew */
    if (Ty > w->tf.Tmax) {
        ws_block_free(&w->blk);
        w->tf.Tmax = Ty;
    }
    int rc = ws_reserve(x, &w->blk, want, layout, w, c, "decoding", err);
    if (!rc) tf_infer_ready(x, &w->tf, c);
    return rc;
}


void infer_free(infer_ws *w)
{
    if (!w) return;
    ws_block_free(&w->blk);
    memset(w, 0, sizeof *w);
}

/* The context of w's products on m: the model's, each row alone unless w->blas, and in lower
 * precision the scratch of the output layer's products, which the step's share. */
static bk_ctx decode_ctx(const infer_ws *w, const nmt_model *m)
{
    bk_ctx x = m->cx;
    x.rows = !w->blas;
    if (w->out && w->out->lw) x.qws = w->out->qws;
    return x;
}

void infer_encode(infer_ws *w, const nmt_model *m, const batch *host_src)
{
    bk_ctx x0 = decode_ctx(w, m);
    const bk_ctx *x = &x0;
    batch_upload(x, &w->view, host_src, &w->bd);
    const batch *src = &w->view;
    const nmt_config *c = &m->cfg;
    const params *p = &m->p; /* FP32: the encoder's weights have no other form */
    if (is_transformer(c)) {
        tf_infer_encode(x, &w->tf, c, p, src);
        return;
    }
    int S = src->B, Tx = src->Tx, hd = w->enc.ndir * c->hid;
    enc_forward(x, &w->enc, c, p, src);
    dec_init_state(x, w->s0, &w->enc, c, p, S, Tx);
    if (has_fertdec(c)) dec_coverage_init(x, w->d0, w->enc.ex, w->enc.mask, S, Tx, c->emb);
    if (has_attention(c)) dec_project_annotations(x, w->UaH, w->enc.H, p, c, Tx * S, hd);
}

int infer_state_dim(const nmt_config *c, int Tx)
{
    if (is_transformer(c)) return 1;
    return c->hid + (needs_prev_ctx(c) ? ctx_dim(c) : 0) + (xi_kind(c) ? Tx : 0) + (has_fertdec(c) ? c->emb : 0);
}

/* offset of d_i in a state row: it comes last */
static int d_offset(const nmt_config *c, int Tx) { return infer_state_dim(c, Tx) - c->emb; }

void infer_init_states(const bk_ctx *x, const infer_ws *w, const nmt_config *c, real *state, int ld, int S, int Tx)
{
    const backend_ops *bk = x->b;
    int dim = infer_state_dim(c, Tx);
    bk->zero_rows(state, ld, S, dim);
    if (is_transformer(c)) return; /* its cache started empty at infer_encode */
    bk->copy_rows(state, ld, w->s0, c->hid, S, c->hid);
    if (has_fertdec(c)) bk->copy_rows(state + d_offset(c, Tx), ld, w->d0, c->emb, S, c->emb);
}

/* The parts of H state rows [s | c | α or Σα | d], ld apart (see infer_state_dim). */
static dec_rows state_rows(const nmt_config *c, real *st, int Tx, int ld)
{
    int oc = c->hid, oa = oc + (needs_prev_ctx(c) ? ctx_dim(c) : 0);
    return (dec_rows){st, needs_prev_ctx(c) ? st + oc : NULL, xi_kind(c) ? st + oa : NULL,
                      has_fertdec(c) ? st + d_offset(c, Tx) : NULL, ld, ld, ld, ld};
}

void infer_step(infer_ws *w, const nmt_model *m, const batch *src, int H, const int *src_of, const int *yprev,
                const real *st_prev, real *st_new, int ld)
{
    const nmt_config *c = &m->cfg;
    bk_ctx x0 = decode_ctx(w, m);
    const bk_ctx *x = &x0;
    params pv = m->p; /* the step's weights in the decoder's precision: the model's converted ones */
    if (w->out && w->out->lw) pv.tw = w->out->lw->tw;
    const params *p = &pv;
    const backend_ops *bk = x->b;
    int n = c->hid, me = c->emb, Tx = src->Tx;
    /* the rows' sentences, previous words and source lengths, uploaded in one copy */
    int *h = w->hidx;
    for (int r = 0; r < H; r++) {
        h[r] = src_of[r];
        h[H + r] = yprev[r];
        h[2 * H + r] = src->xlen[src_of[r]];
    }
    bk->copy_in(w->idx, h, sizeof(int) * 3 * H);
    const int *d_src_of = w->idx, *d_yprev = w->idx + H, *d_rowlen = w->idx + 2 * H;
    (void)st_prev, (void)st_new, (void)ld;
    if (is_transformer(c)) {
        const real *top = tf_infer_step(x, &w->tf, c, p, H, d_src_of, d_yprev, d_rowlen, w->alpha);
        if (w->out) out_logits(x, w->out, w->logits, top, H);
        else tf_infer_logits(x, c, p, top, H, w->logits);
        return;
    }
    bk->gather_rows(w->E, p->Et, d_yprev, H, me); /* ȳ_{i-1}; a negative id (no previous word) is ȳ_0 = 0 */
    dec_input_terms(x, w->pre, w->E, PW(p, dec_W), p->dec_b, H, me, 3 * n);
    if (has_fertdec(c)) dec_input_terms(x, w->g, w->E, PW(p, fer_Wg), p->fer_bg, H, me, me);
    dec_src ds = {w->enc.H, w->UaH, w->view.dev_xlen, src->B, Tx, w->enc.ndir * n};
    dec_bufs bf = {w->pre, w->g, w->Q, w->alpha, w->ctx, w->xi, w->th, w->tmp, w->cache, d_rowlen, NULL}; /* no dropout */
    dec_rows prev = state_rows(c, (real *)st_prev, Tx, ld), next = state_rows(c, st_new, Tx, ld);
    dec_step(x, &bf, c, p, &ds, H, d_src_of, &prev, &next);
    /* s_new has stride ld: gather it for the readout's product */
    real *s_dense = w->tmp;
    bk->copy_rows(s_dense, n, st_new, ld, H, n);
    if (!w->out) out_step(x, w->logits, w->tt, w->t, s_dense, w->E, w->ctx, c, p, H);
    else {
        out_step_hidden(x, w->tt, w->t, s_dense, w->E, w->ctx, c, p, H);
        out_logits(x, w->out, w->logits, w->t, H);
    }
}

void infer_reorder(infer_ws *w, const nmt_model *m, const int *parent, int n)
{
    if (!is_transformer(&m->cfg)) return;
    bk_ctx x = decode_ctx(w, m);
    tf_infer_reorder(&x, &w->tf, &m->cfg, parent, n);
}
