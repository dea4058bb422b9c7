/* transformer.c: the Transformer over a minibatch (docs/MODEL-MAP.md, "The Transformer family"):
 * embeddings and positions, the encoder's and the decoder's layers, the output layer and its
 * loss; then the same backwards. Rows are batch-major ([B*T, d], row b*T + t). */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "base/fault.h"
#include "nn/readout.h"
#include "nn/ssru.h"
#include "nn/tf_layer.h"
#include "nn/transformer.h"

bk_weight tf_weight(const params *p, int s, int l, int k)
{
    return params_w(p, tf_slot(s, l, k));
}

void tf_sinusoid(real *out, int T, int d)
{
    int h = d / 2;
    double inc = h > 1 ? log(10000.0) / (h - 1) : 0;
    for (int t = 0; t < T; t++) {
        real *r = out + (size_t)t * d;
        for (int i = 0; i < h; i++) {
            double v = t * exp(-i * inc);
            r[i] = (real)sin(v);
            r[h + i] = (real)cos(v);
        }
        if (d % 2) r[d - 1] = 0;
    }
}

static int blocks(const nmt_config *c, int s) { return s == TF_ENC ? 2 * c->enc_depth : 3 * c->dec_depth; }
static int depth(const nmt_config *c, int s) { return s == TF_ENC ? c->enc_depth : c->dec_depth; }

static real *take(arena *a, size_t n) { return arena_take(a, sizeof(real) * n); }

static void layout_attc(tf_attc *a, arena *ap, size_t Rq, size_t qw, size_t Rk, size_t kw, size_t pn, int d)
{
    a->q = take(ap, Rq * qw);
    a->kv = kw ? take(ap, Rk * kw) : NULL;
    a->P = take(ap, pn);
    a->Pd = take(ap, pn);
    a->mbuf = take(ap, pn);
    a->ctx = take(ap, Rq * d);
}

void tf_layout(tf_ws *w, arena *ap, const nmt_config *c, int B, int Tx, int Ty)
{
    size_t d = c->emb, f = c->ffn, h = c->heads, V = c->tgt_vocab;
    size_t R[2] = {(size_t)B * Tx, (size_t)B * Ty}, Rm = R[0] > R[1] ? R[0] : R[1];
    size_t T[2] = {(size_t)Tx, (size_t)Ty}, Tm = T[0] > T[1] ? T[0] : T[1];
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k <= blocks(c, s); k++) w->X[s][k] = take(ap, R[s] * d);
        w->ebuf[s] = take(ap, R[s] * d);
        for (int l = 0; l < depth(c, s); l++) {
            tf_lay *L = &w->lay[s][l];
            for (int k = 0; k < (s ? 3 : 2); k++) {
                L->blk[k].n = take(ap, R[s] * d);
                L->blk[k].st = take(ap, R[s] * 2);
                L->blk[k].mbuf = take(ap, R[s] * d);
            }
            layout_attc(&L->self, ap, R[s], 3 * d, 0, 0, (size_t)B * h * T[s] * T[s], d);
            if (s) layout_attc(&L->ctx, ap, R[1], d, R[0], 2 * d, (size_t)B * h * Ty * Tx, d);
            L->ffn.pre = take(ap, R[s] * f);
            L->ffn.act = take(ap, R[s] * f);
            L->ffn.mbuf = take(ap, R[s] * f);
        }
        w->top[s] = take(ap, R[s] * d);
        w->top_st[s] = take(ap, R[s] * 2);
    }
    size_t ni = 2 * R[0] + 2 * R[1] + 2 * R[1];
    w->idx = arena_take(ap, sizeof(int) * ni + R[1]);
    w->hidx = arena_take_host(ap, sizeof(int) * ni + R[1]);
    w->scale = take(ap, Rm + Tm * d);
    w->hscale = arena_take_host(ap, sizeof(real) * (Rm + Tm * d));
    w->one = c->ssru ? take(ap, Rm) : NULL;
    w->hone = c->ssru ? arena_take_host(ap, sizeof(real) * Rm) : NULL;
    w->F = take(ap, R[1] * d);
    w->logits = take(ap, R[1] * V);
    w->nll = arena_take(ap, sizeof(double) * R[1]);
    w->rsum = arena_take(ap, sizeof(double) * R[1]);
    w->hnll = arena_take_host(ap, sizeof(double) * R[1]);
    w->bias_part = take(ap, (R[1] / OUT_BLOCK + 1) * V);
    w->G = take(ap, Rm * d);
    w->GS = take(ap, Rm * d);
    w->dA = take(ap, Rm * d);
    w->DO = take(ap, Rm * d);
    w->dq = take(ap, Rm * 3 * d);
    w->dkv = take(ap, R[0] * 2 * d);
    w->dH = take(ap, R[0] * d);
    w->dctx = take(ap, Rm * d);
    w->dP = take(ap, (size_t)B * h * Tm * Tm);
    w->dpre = take(ap, Rm * f);
    w->gx = take(ap, Rm * d);
    w->tmp = take(ap, Rm * (3 * d > f ? 3 * d : f));
}

/* ------------------------------------------------------------------ the batch's arrays */

/* Source ids and positions, previous target words (-1 at t = 0, the zero row), the real target
 * tokens' rows, and the scale and sinusoid, built on the host and uploaded. */
static void upload_batch(const bk_ctx *x, tf_ws *w, const nmt_config *c, const batch *bt)
{
    int B = bt->B, Tx = bt->Tx, Ty = w->Ty, d = c->emb, Rx = B * Tx, Ry = B * Ty;
    int Tm = Tx > Ty ? Tx : Ty, Rm = Rx > Ry ? Rx : Ry;
    int *h = w->hidx, *hids[2] = {h, h + 2 * Rx}, *hpos[2] = {h + Rx, h + 2 * Rx + Ry};
    int *htm = h + 2 * Rx + 2 * Ry, *hbm = htm + Ry;
    unsigned char *hm = (unsigned char *)(hbm + Ry);
    for (int b = 0; b < B; b++) {
        for (int t = 0; t < Tx; t++) {
            hids[0][b * Tx + t] = bt->x[t * B + b];
            hpos[0][b * Tx + t] = c->max_pos && t >= c->max_pos ? c->max_pos - 1 : t;
        }
        for (int t = 0; t < Ty; t++) {
            hids[1][b * Ty + t] = t ? bt->y[(t - 1) * B + b] : -1;
            hpos[1][b * Ty + t] = c->max_pos && t >= c->max_pos ? c->max_pos - 1 : t;
            hm[b * Ty + t] = t > 0;
        }
    }
    w->N = 0;
    for (int t = 0; t < Ty; t++)
        for (int b = 0; b < B; b++)
            if (t < bt->ylen[b]) {
                htm[w->N] = t * B + b;
                hbm[w->N++] = b * Ty + t;
            }
    int *dv = w->idx;
    w->ids[0] = dv, w->pos[0] = dv + Rx, w->ids[1] = dv + 2 * Rx, w->pos[1] = dv + 2 * Rx + Ry;
    w->rows_tm = dv + 2 * Rx + 2 * Ry, w->rows_bm = w->rows_tm + Ry;
    x->b->copy_in(dv, h, sizeof(int) * (2 * Rx + 4 * Ry) + Ry);
    for (int r = 0; r < Rm; r++) w->hscale[r] = (real)sqrt((double)d);
    w->sin = w->scale + Rm;
    if (!c->max_pos) tf_sinusoid(w->hscale + Rm, Tm, d);
    x->b->copy_in(w->scale, w->hscale, sizeof(real) * (Rm + (c->max_pos ? 0 : (size_t)Tm * d)));
    if (!w->one) return;
    for (int r = 0; r < Rm; r++) w->hone[r] = 1;
    x->b->copy_in(w->one, w->hone, sizeof(real) * Rm);
}

/* the embedding's mask of real previous words (side 1: t > 0), device */
static const unsigned char *prev_mask(const tf_ws *w) { return (const unsigned char *)(w->rows_bm + w->B * w->Ty); }

/* The dropout masks of a batch, each drawn on the device from the batch's seed and its place in
 * this order; p 0 leaves the pointer NULL. */
typedef struct drawer { const bk_ctx *x; uint64_t seed; int site; } drawer;

static real *draw(drawer *r, real *buf, long n, double p)
{
    uint64_t s = r->seed + (uint64_t)(r->site++) * 0x632BE59BD9B4E019ull;
    if (!(p > 0)) return NULL;
    r->x->b->dropout_mask(buf, n, s, (real)p);
    return buf;
}

/* the masks' room is laid out always; the ones this batch uses are drawn, the others NULL */
static void draw_masks(const bk_ctx *x, tf_ws *w, const nmt_config *c)
{
    drawer r = {x, w->drop.seed, 0};
    int d = c->emb, f = c->ffn;
    long R[2] = {(long)w->B * w->Tx, (long)w->B * w->Ty}, T[2] = {w->Tx, w->Ty};
    for (int s = 0; s < 2; s++) {
        w->emask[s] = draw(&r, w->ebuf[s], R[s] * d, w->drop.res);
        for (int l = 0; l < depth(c, s); l++) {
            tf_lay *L = &w->lay[s][l];
            for (int k = 0; k < (s ? 3 : 2); k++) L->blk[k].mask = draw(&r, L->blk[k].mbuf, R[s] * d, w->drop.res);
            L->self.mask = draw(&r, L->self.mbuf, (long)w->B * c->heads * T[s] * T[s], w->drop.attn);
            if (s) L->ctx.mask = draw(&r, L->ctx.mbuf, (long)w->B * c->heads * T[1] * T[0], w->drop.attn);
            L->ffn.mask = draw(&r, L->ffn.mbuf, R[s] * f, w->drop.ffn);
        }
    }
}

/* ------------------------------------------------------------------ forward */

/* X0 = √d E[ids] + P (learned, or the sinusoid by position), ∘ the mask */
static void embed(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, int s, int R)
{
    const backend_ops *bk = x->b;
    int d = c->emb;
    real *X0 = w->X[s][0];
    const real *table = s == TF_ENC && c->tied_emb < 2 ? p->Es : p->Et;
    bk->gather_rows(X0, c->max_pos ? p->tf_pos[s] : w->sin, w->pos[s], R, d);
    bk->gather_rows(w->tmp, table, w->ids[s], R, d);
    bk->axpy_diff_rows(X0, d, w->scale, w->tmp, d, NULL, 0, R, d);
    if (w->emask[s]) bk->mul_rows(X0, d, X0, d, w->emask[s], d, R, d);
}

static tf_att self_att(const nmt_config *c, const real *qkv, int B, int T, const int *klen, int causal)
{
    int d = c->emb;
    /* qkv NULL: the callers point Q, K and V at each layer's buffer later (no offset from NULL) */
    tf_att a = {B, c->heads, T, T, d / c->heads, qkv, 3 * d, (long)T * 3 * d, qkv ? qkv + d : NULL, qkv ? qkv + 2 * d : NULL,
                3 * d, (long)T * 3 * d, NULL, klen, T, causal, 0};
    return a;
}

static tf_att cross_att(const nmt_config *c, const real *q, const real *kv, int B, int Ty, int Tx, const int *xlen)
{
    int d = c->emb;
    tf_att a = {B, c->heads, Ty, Tx, d / c->heads, q, d, (long)Ty * d, kv, kv + d, 2 * d, (long)Tx * 2 * d, NULL, xlen,
                Tx, 0, 0};
    return a;
}

/* a self-attention block: Xout from Xin */
static void self_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, int s, int l, int k,
                         const real *Xin, real *Xout, const tf_att *shape)
{
    int d = c->emb, R = shape->n * shape->Tq;
    tf_lay *L = &w->lay[s][l];
    real *g = tf_t(p, s, l, TF_SELF_LNS), *b = tf_t(p, s, l, TF_SELF_LNB);
    const real *a = tf_block_in(x, &L->blk[k], Xin, g, b, R, d, c);
    tf_linear(x, L->self.q, a, R, d, 3 * d, tf_weight(p, s, l, TF_SELF_WQKV), tf_t(p, s, l, TF_SELF_BQKV));
    tf_att_forward(x, shape, L->self.P, L->self.Pd, L->self.mask, L->self.ctx, d, (long)shape->Tq * d);
    tf_linear(x, w->tmp, L->self.ctx, R, d, d, tf_weight(p, s, l, TF_SELF_WO), tf_t(p, s, l, TF_SELF_BO));
    tf_block_out(x, &L->blk[k], Xout, Xin, w->tmp, g, b, R, d, c);
}

/* an SSRU block of the decoder (nmt_config.ssru): its recurrence position by position over the
 * batch's sentences; kept for backward: g = a·[W | W_f] in self.q [R, 2d], the gates f after it
 * [R, d], the cells in self.ctx; the outputs in w->tmp (scratch: dA) */
static void ssru_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, int l, const real *Xin, real *Xout)
{
    int d = c->emb, B = w->B, T = w->Ty, R = B * T;
    tf_lay *L = &w->lay[TF_DEC][l];
    real *g = tf_t(p, TF_DEC, l, TF_SELF_LNS), *b = tf_t(p, TF_DEC, l, TF_SELF_LNB), *G = L->self.q, *C = L->self.ctx;
    real *F = G + (size_t)R * 2 * d;
    const real *a = tf_block_in(x, &L->blk[0], Xin, g, b, R, d, c);
    tf_linear(x, G, a, R, d, 2 * d, tf_weight(p, TF_DEC, l, TF_SELF_WQKV), NULL);
    for (int t = 0; t < T; t++) /* rows b*T + t of every sentence b */
        ssru_step(x, C + (long)t * d, T * d, w->tmp + (long)t * d, T * d, G + (long)t * 2 * d, T * 2 * d,
                  tf_t(p, TF_DEC, l, TF_SELF_BQKV), t ? C + (long)(t - 1) * d : NULL, T * d, F + (long)t * d, T * d, w->dA,
                  w->one, B, d);
    tf_block_out(x, &L->blk[0], Xout, Xin, w->tmp, g, b, R, d, c);
}

static void cross_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, int l, const real *Xin,
                          real *Xout, const batch *bt)
{
    int d = c->emb, B = bt->B, R = B * bt->Ty;
    tf_lay *L = &w->lay[TF_DEC][l];
    real *g = tf_t(p, TF_DEC, l, TF_CTX_LNS), *b = tf_t(p, TF_DEC, l, TF_CTX_LNB);
    const real *a = tf_block_in(x, &L->blk[1], Xin, g, b, R, d, c);
    tf_linear(x, L->ctx.q, a, R, d, d, tf_weight(p, TF_DEC, l, TF_CTX_WQ), tf_t(p, TF_DEC, l, TF_CTX_BQ));
    tf_linear(x, L->ctx.kv, w->top[TF_ENC], B * bt->Tx, d, 2 * d, tf_weight(p, TF_DEC, l, TF_CTX_WKV),
              tf_t(p, TF_DEC, l, TF_CTX_BKV));
    tf_att att = cross_att(c, L->ctx.q, L->ctx.kv, B, bt->Ty, bt->Tx, bt->dev_xlen);
    tf_att_forward(x, &att, L->ctx.P, L->ctx.Pd, L->ctx.mask, L->ctx.ctx, d, (long)bt->Ty * d);
    tf_linear(x, w->tmp, L->ctx.ctx, R, d, d, tf_weight(p, TF_DEC, l, TF_CTX_WO), tf_t(p, TF_DEC, l, TF_CTX_BO));
    tf_block_out(x, &L->blk[1], Xout, Xin, w->tmp, g, b, R, d, c);
}

static void ffn_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, int s, int l, int k,
                        const real *Xin, real *Xout, int R)
{
    static const int act[3] = {BK_RELU, BK_GELU, BK_SWISH};
    int d = c->emb, f = c->ffn;
    tf_lay *L = &w->lay[s][l];
    real *g = tf_t(p, s, l, TF_FFN_LNS), *b = tf_t(p, s, l, TF_FFN_LNB);
    const real *a = tf_block_in(x, &L->blk[k], Xin, g, b, R, d, c);
    tf_linear(x, L->ffn.pre, a, R, d, f, tf_weight(p, s, l, TF_FFN_W1), tf_t(p, s, l, TF_FFN_B1));
    x->b->act_rows(act[c->ffn_act], L->ffn.act, f, L->ffn.pre, f, NULL, R, f);
    if (L->ffn.mask) x->b->mul_rows(L->ffn.act, f, L->ffn.act, f, L->ffn.mask, f, R, f);
    tf_linear(x, w->tmp, L->ffn.act, R, f, d, tf_weight(p, s, l, TF_FFN_W2), tf_t(p, s, l, TF_FFN_B2));
    tf_block_out(x, &L->blk[k], Xout, Xin, w->tmp, g, b, R, d, c);
}

/* the top of a stack: LN_top of its last stream (pre-norm), or the stream itself */
static void stack_top(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, int s, int R)
{
    real *last = w->X[s][blocks(c, s)];
    if (c->post_norm) {
        w->top[s] = last;
        return;
    }
    x->b->layer_norm(w->top[s], c->emb, w->top_st[s], last, c->emb, p->tf_top[s][0], p->tf_top[s][1], R, c->emb,
                     (real)c->ln_eps);
}

static double output_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, const batch *bt, real *logp,
                             double ls)
{
    const backend_ops *bk = x->b;
    int d = c->emb, V = c->tgt_vocab, N = w->N;
    bk->gather_rows(w->F, w->top[TF_DEC], w->rows_bm, N, d);
    bk->repeat_row(w->logits, p->out_bias, N, V);
    if (c->tied_emb) mm(x, 0, 1, N, V, d, w->F, d, p->Et, d, 1, w->logits, V);
    else mmw(x, N, V, d, w->F, d, PW(p, out_W), 1, w->logits, V);
    if (logp) bk->zero_rows(logp, bt->Ty * bt->B, 1, bt->Ty * bt->B);
    bk->softmax_nll(w->logits, w->rsum, w->nll, logp, w->rows_tm, bt->dev_y, N, V, ls);
    bk->copy_out(w->hnll, w->nll, sizeof(double) * N);
    double loss = 0;
    for (int r = 0; r < N; r++) loss += w->hnll[r];
    return loss;
}

void tf_encode(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, const batch *bt, const tf_drop *drop)
{
    int B = bt->B, Rx = B * bt->Tx;
    w->B = B, w->Tx = bt->Tx, w->Ty = bt->y ? bt->Ty : 0;
    w->drop = drop ? *drop : (tf_drop){0, 0, 0, 0};
    upload_batch(x, w, c, bt);
    draw_masks(x, w, c);
    embed(x, w, c, p, TF_ENC, Rx);
    tf_att enc = self_att(c, NULL, B, bt->Tx, bt->dev_xlen, 0);
    for (int l = 0; l < c->enc_depth; l++) {
        real **X = w->X[TF_ENC] + 2 * l;
        enc.Q = w->lay[TF_ENC][l].self.q, enc.K = enc.Q + c->emb, enc.V = enc.Q + 2 * c->emb;
        self_forward(x, w, c, p, TF_ENC, l, 0, X[0], X[1], &enc);
        ffn_forward(x, w, c, p, TF_ENC, l, 1, X[1], X[2], Rx);
    }
    stack_top(x, w, c, p, TF_ENC, Rx);
}

double tf_forward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, const batch *bt, real *logp,
                  const tf_drop *drop, double ls)
{
    int B = bt->B, Ry = B * bt->Ty;
    tf_encode(x, w, c, p, bt, drop);
    embed(x, w, c, p, TF_DEC, Ry);
    tf_att dec = self_att(c, NULL, B, bt->Ty, NULL, 1);
    for (int l = 0; l < c->dec_depth; l++) {
        real **X = w->X[TF_DEC] + 3 * l;
        dec.Q = w->lay[TF_DEC][l].self.q, dec.K = dec.Q + c->emb, dec.V = dec.Q + 2 * c->emb;
        if (c->ssru) ssru_forward(x, w, c, p, l, X[0], X[1]);
        else self_forward(x, w, c, p, TF_DEC, l, 0, X[0], X[1], &dec);
        cross_forward(x, w, c, p, l, X[1], X[2], bt);
        ffn_forward(x, w, c, p, TF_DEC, l, 2, X[2], X[3], Ry);
    }
    stack_top(x, w, c, p, TF_DEC, Ry);
    return output_forward(x, w, c, p, bt, logp, ls);
}

void tf_head_probs(const bk_ctx *x, const tf_ws *w, const nmt_config *c, int l, int k, real *out)
{
    int blk = w->Ty * w->Tx; /* one head's block of one sentence; a sentence's heads lie side by side */
    x->b->copy_rows(out, blk, w->lay[TF_DEC][l].ctx.P + (size_t)k * blk, c->heads * blk, w->B, blk);
}

/* ------------------------------------------------------------------ backward */

/* the gradients' tensors of layer l of side s in g */
#define GT(k) tf_t(g, s, l, (k))

/* From w->G = d Xout of a self-attention block, w->G becomes d Xin. */
static void self_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, int s, int l, int k,
                          const real *Xin, const tf_att *shape)
{
    int d = c->emb, R = shape->n * shape->Tq;
    long oq = (long)shape->Tq * 3 * d;
    tf_lay *L = &w->lay[s][l];
    const real *gam = tf_t(p, s, l, TF_SELF_LNS), *a = c->post_norm ? Xin : L->blk[k].n;
    tf_block_back_out(x, &L->blk[k], w->G, w->DO, w->GS, w->gx, GT(TF_SELF_LNS), GT(TF_SELF_LNB), gam, R, d, c);
    tf_linear_backward(x, w->dctx, GT(TF_SELF_WO), GT(TF_SELF_BO), w->DO, L->self.ctx, tf_t(p, s, l, TF_SELF_WO), R, d, d);
    tf_att_backward(x, shape, L->self.P, L->self.Pd, L->self.mask, w->dctx, d, (long)shape->Tq * d, w->dP, w->dq, 3 * d, oq,
                    w->dq + d, w->dq + 2 * d, 3 * d, oq, NULL);
    tf_linear_backward(x, w->dA, GT(TF_SELF_WQKV), GT(TF_SELF_BQKV), w->dq, a, tf_t(p, s, l, TF_SELF_WQKV), R, d, 3 * d);
    tf_block_back_in(x, &L->blk[k], w->G, w->dA, w->GS, w->gx, GT(TF_SELF_LNS), GT(TF_SELF_LNB), Xin, gam, R, d, c);
}

/* From w->G = d Xout of an SSRU block (ssru_forward), w->G becomes d Xin (scratch: dctx, tmp). */
static void ssru_block_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, int l,
                                const real *Xin)
{
    const int s = TF_DEC;
    int d = c->emb, B = w->B, T = w->Ty, R = B * T;
    tf_lay *L = &w->lay[s][l];
    const real *gam = tf_t(p, s, l, TF_SELF_LNS), *a = c->post_norm ? Xin : L->blk[0].n, *G = L->self.q;
    tf_block_back_out(x, &L->blk[0], w->G, w->DO, w->GS, w->gx, GT(TF_SELF_LNS), GT(TF_SELF_LNB), gam, R, d, c);
    ssru_backward(x, w->dq, w->DO, L->self.ctx, G + (size_t)R * 2 * d, G, w->dctx, w->tmp, w->one, B, T, d);
    tf_linear_backward(x, w->dA, GT(TF_SELF_WQKV), NULL, w->dq, a, tf_t(p, s, l, TF_SELF_WQKV), R, d, 2 * d);
    colsum_add(x, GT(TF_SELF_BQKV), w->dq + d, R, d, 2 * d); /* b_f: the gates' half */
    tf_block_back_in(x, &L->blk[0], w->G, w->dA, w->GS, w->gx, GT(TF_SELF_LNS), GT(TF_SELF_LNB), Xin, gam, R, d, c);
}

/* the same for an encoder-decoder attention block; adds the encoder's share into w->dH */
static void cross_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, int l,
                           const real *Xin, const batch *bt)
{
    const int s = TF_DEC;
    int d = c->emb, B = bt->B, R = B * bt->Ty, Rx = B * bt->Tx;
    tf_lay *L = &w->lay[s][l];
    const real *gam = tf_t(p, s, l, TF_CTX_LNS), *a = c->post_norm ? Xin : L->blk[1].n;
    tf_block_back_out(x, &L->blk[1], w->G, w->DO, w->GS, w->gx, GT(TF_CTX_LNS), GT(TF_CTX_LNB), gam, R, d, c);
    tf_linear_backward(x, w->dctx, GT(TF_CTX_WO), GT(TF_CTX_BO), w->DO, L->ctx.ctx, tf_t(p, s, l, TF_CTX_WO), R, d, d);
    tf_att att = cross_att(c, L->ctx.q, L->ctx.kv, B, bt->Ty, bt->Tx, bt->dev_xlen);
    tf_pgrad pg = {w->ga, w->ga_head}; /* guided alignment's, on one head of one layer */
    tf_att_backward(x, &att, L->ctx.P, L->ctx.Pd, L->ctx.mask, w->dctx, d, (long)bt->Ty * d, w->dP, w->dq, d,
                    (long)bt->Ty * d, w->dkv, w->dkv + d, 2 * d, (long)bt->Tx * 2 * d, w->ga && l == w->ga_layer ? &pg : NULL);
    tf_linear_backward(x, w->dA, GT(TF_CTX_WQ), GT(TF_CTX_BQ), w->dq, a, tf_t(p, s, l, TF_CTX_WQ), R, d, d);
    /* [K|V] = H W_kv + b_kv: H's gradient sums every decoder layer's share */
    tf_linear_backward(x, NULL, GT(TF_CTX_WKV), GT(TF_CTX_BKV), w->dkv, w->top[TF_ENC], NULL, Rx, d, 2 * d);
    if (!FAULT(FAULT_TF_CROSS)) mm(x, 0, 1, Rx, d, 2 * d, w->dkv, 2 * d, tf_t(p, s, l, TF_CTX_WKV), 2 * d, 1, w->dH, d);
    tf_block_back_in(x, &L->blk[1], w->G, w->dA, w->GS, w->gx, GT(TF_CTX_LNS), GT(TF_CTX_LNB), Xin, gam, R, d, c);
}

static void ffn_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, int s, int l, int k,
                         const real *Xin, int R)
{
    static const int act[3] = {BK_RELU, BK_GELU, BK_SWISH};
    int d = c->emb, f = c->ffn;
    tf_lay *L = &w->lay[s][l];
    const real *gam = tf_t(p, s, l, TF_FFN_LNS), *a = c->post_norm ? Xin : L->blk[k].n;
    tf_block_back_out(x, &L->blk[k], w->G, w->DO, w->GS, w->gx, GT(TF_FFN_LNS), GT(TF_FFN_LNB), gam, R, d, c);
    tf_linear_backward(x, w->dpre, GT(TF_FFN_W2), GT(TF_FFN_B2), w->DO, L->ffn.act, tf_t(p, s, l, TF_FFN_W2), R, f, d);
    if (L->ffn.mask) x->b->mul_rows(w->dpre, f, w->dpre, f, L->ffn.mask, f, R, f);
    x->b->act_grad_x_rows(act[c->ffn_act], w->dpre, f, w->dpre, f, L->ffn.pre, f, R, f);
    tf_linear_backward(x, w->dA, GT(TF_FFN_W1), FAULT(FAULT_TF_FFN) ? NULL : GT(TF_FFN_B1), w->dpre, a,
                       tf_t(p, s, l, TF_FFN_W1), R, d, f);
    tf_block_back_in(x, &L->blk[k], w->G, w->dA, w->GS, w->gx, GT(TF_FFN_LNS), GT(TF_FFN_LNB), Xin, gam, R, d, c);
}

/* w->G = d top[s] becomes d(the stack's last stream) */
static void top_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, int s, int R)
{
    if (c->post_norm) return;
    int d = c->emb;
    x->b->layer_norm_backward(w->GS, d, 0, w->gx, w->G, d, w->X[s][blocks(c, s)], d, w->top_st[s], p->tf_top[s][0], R, d);
    colsum_add(x, g->tf_top[s][0], w->gx, R, d, d);
    colsum_add(x, g->tf_top[s][1], w->G, R, d, d);
    x->b->copy_rows(w->G, d, w->GS, d, R, d);
}

/* from w->G = d X0: the embeddings' and learned positions' gradients */
static void embed_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, params *g, int s, int R)
{
    const backend_ops *bk = x->b;
    int d = c->emb;
    if (w->emask[s]) bk->mul_rows(w->G, d, w->G, d, w->emask[s], d, R, d);
    if (c->max_pos && !FAULT(FAULT_TF_POS)) bk->scatter_add_rows(g->tf_pos[s], w->G, w->pos[s], NULL, R, d);
    bk->zero_rows(w->tmp, d, R, d);
    bk->axpy_diff_rows(w->tmp, d, w->scale, w->G, d, NULL, 0, R, d);
    real *table = s == TF_ENC && c->tied_emb < 2 ? g->Es : g->Et;
    bk->scatter_add_rows(table, w->tmp, w->ids[s], s == TF_DEC ? prev_mask(w) : NULL, R, d);
}

/* the output layer's backward: w->G = d top[dec] */
static void output_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt,
                            real scale, double ls)
{
    const backend_ops *bk = x->b;
    int d = c->emb, V = c->tgt_vocab, N = w->N, Ry = bt->B * bt->Ty;
    bk->softmax_nll_backward(w->logits, g->out_bias, w->bias_part, w->rsum, w->rows_tm, bt->dev_y, N, V, scale,
                             FAULT(FAULT_LABEL_SMOOTHING) ? 0 : (real)ls, OUT_BLOCK, NULL);
    real *dF = w->tmp;
    if (c->tied_emb) {
        mm(x, 1, 0, V, d, N, w->logits, V, w->F, d, 1, g->Et, d);
        mm(x, 0, 0, N, d, V, w->logits, V, p->Et, d, 0, dF, d);
    } else {
        mm(x, 1, 0, d, V, N, w->F, d, w->logits, V, 1, g->out_W, V);
        mm(x, 0, 1, N, d, V, w->logits, V, p->out_W, V, 0, dF, d);
    }
    bk->zero_rows(w->G, d, Ry, d);
    bk->scatter_add_rows(w->G, dF, w->rows_bm, NULL, N, d);
}

void tf_backward(const bk_ctx *x, tf_ws *w, const nmt_config *c, const params *p, params *g, const batch *bt, real scale,
                 double ls)
{
    int B = bt->B, Rx = B * bt->Tx, Ry = B * bt->Ty, d = c->emb;
    output_backward(x, w, c, p, g, bt, scale, ls);
    top_backward(x, w, c, p, g, TF_DEC, Ry);
    x->b->zero_rows(w->dH, d, Rx, d);
    tf_att dec = self_att(c, NULL, B, bt->Ty, NULL, 1);
    for (int l = c->dec_depth - 1; l >= 0; l--) {
        real **X = w->X[TF_DEC] + 3 * l;
        ffn_backward(x, w, c, p, g, TF_DEC, l, 2, X[2], Ry);
        cross_backward(x, w, c, p, g, l, X[1], bt);
        dec.Q = w->lay[TF_DEC][l].self.q, dec.K = dec.Q + d, dec.V = dec.Q + 2 * d;
        if (c->ssru) ssru_block_backward(x, w, c, p, g, l, X[0]);
        else self_backward(x, w, c, p, g, TF_DEC, l, 0, X[0], &dec);
    }
    embed_backward(x, w, c, g, TF_DEC, Ry);
    x->b->copy_rows(w->G, d, w->dH, d, Rx, d);
    top_backward(x, w, c, p, g, TF_ENC, Rx);
    tf_att enc = self_att(c, NULL, B, bt->Tx, bt->dev_xlen, 0);
    for (int l = c->enc_depth - 1; l >= 0; l--) {
        real **X = w->X[TF_ENC] + 2 * l;
        ffn_backward(x, w, c, p, g, TF_ENC, l, 1, X[1], Rx);
        enc.Q = w->lay[TF_ENC][l].self.q, enc.K = enc.Q + d, enc.V = enc.Q + 2 * d;
        self_backward(x, w, c, p, g, TF_ENC, l, 0, X[0], &enc);
    }
    embed_backward(x, w, c, g, TF_ENC, Rx);
}
