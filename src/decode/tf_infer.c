/* tf_infer.c: the Transformer's search step (docs/MODEL-MAP.md): the same blocks as training
 * (nn/tf_layer.c), one query row per hypothesis, its self-attention reading the cache of its own
 * earlier positions and its encoder-decoder attention its sentence's keys through a selection. */
#include <math.h>
#include <string.h>

#include "decode/tf_infer.h"
#include "nn/ssru.h"
#include "nn/tf_layer.h"

static real *take(arena *a, size_t n) { return arena_take(a, sizeof(real) * n); }

void tf_infer_layout(tf_infer *t, arena *a, const nmt_config *c, int S, int Tx, int H, int Tmax)
{
    size_t d = c->emb, f = c->ffn, L = c->dec_depth, h = c->heads;
    tf_layout(&t->enc, a, c, S, Tx, 0);
    t->S = S, t->Tx = Tx, t->H = H, t->Tmax = Tmax;
    for (size_t l = 0; l < L; l++) t->kv[l] = take(a, (size_t)S * Tx * 2 * d);
    t->cache = take(a, (size_t)H * Tmax * L * 2 * d);
    t->spare = take(a, (size_t)H * Tmax * L * 2 * d);
    t->x = take(a, H * d);
    t->y = take(a, H * d);
    t->n = take(a, H * d);
    t->st = take(a, (size_t)H * 2);
    t->q = take(a, H * 3 * d);
    t->ctx = take(a, H * d);
    t->tmp = take(a, H * (3 * d > f ? 3 * d : f));
    t->pre = take(a, H * f);
    t->P = take(a, (size_t)H * h * Tmax);
    t->Pc = take(a, (size_t)H * h * Tx);
    t->ones = take(a, h);
    t->pos = take(a, (size_t)Tmax * d);
    t->scale = take(a, H);
    t->one = c->ssru ? take(a, H) : NULL;
    t->hconst = arena_take_host(a, sizeof(real) * ((size_t)Tmax * d + h + 2 * (size_t)H));
}

void tf_infer_ready(const bk_ctx *x, tf_infer *t, const nmt_config *c)
{
    size_t d = c->emb, h = c->heads, n = (size_t)t->Tmax * d;
    real *buf = t->hconst;
    tf_sinusoid(buf, t->Tmax, (int)d);
    for (size_t k = 0; k < h; k++) buf[n + k] = (real)(1.0 / h);
    for (int r = 0; r < t->H; r++) buf[n + h + r] = (real)sqrt((double)d);
    x->b->copy_in(t->pos, buf, sizeof(real) * n);
    x->b->copy_in(t->ones, buf + n, sizeof(real) * h);
    x->b->copy_in(t->scale, buf + n + h, sizeof(real) * t->H);
    if (!t->one) return;
    for (int r = 0; r < t->H; r++) buf[n + h + t->H + r] = 1;
    x->b->copy_in(t->one, buf + n + h + t->H, sizeof(real) * t->H);
}

void tf_infer_encode(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, const batch *src)
{
    batch b = *src;
    b.y = NULL; /* the source side alone */
    tf_encode(x, &t->enc, c, p, &b, NULL);
    int d = c->emb, R = src->B * src->Tx;
    for (int l = 0; l < c->dec_depth; l++)
        tf_linear(x, t->kv[l], t->enc.top[TF_ENC], R, d, 2 * d, tf_weight(p, TF_DEC, l, TF_CTX_WKV),
                  tf_t(p, TF_DEC, l, TF_CTX_BKV));
    t->t = 0;
}

/* a block's sublayer output t->tmp into the stream: t->x = block(t->x) through t->y */
static void block_done(const bk_ctx *x, tf_infer *t, tf_blk *k, const real *g, const real *b, int H, const nmt_config *c)
{
    tf_block_out(x, k, t->y, t->x, t->tmp, g, b, H, c->emb, c);
    real *sw = t->x;
    t->x = t->y, t->y = sw;
}

/* the keys and values of t->x, the stream before the norm, into this position's cache slot */
static void raw_kv(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int l, int H, real *slot, int ld)
{
    int d = c->emb;
    tf_linear(x, t->tmp, t->x, H, d, 3 * d, tf_weight(p, TF_DEC, l, TF_SELF_WQKV), tf_t(p, TF_DEC, l, TF_SELF_BQKV));
    x->b->copy_rows(slot, ld, t->tmp + d, 3 * d, H, 2 * d);
}

/* The first half of decoder layer l's self block, attention or SSRU: its input (t->x, normed
 * when pre-norm, through k) times its fused weights into t->q, cols wide (bias NULL: none). */
static void self_in(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int l, int H, tf_blk *k, int cols,
                    const real *bias)
{
    const real *a = tf_block_in(x, k, t->x, tf_t(p, TF_DEC, l, TF_SELF_LNS), tf_t(p, TF_DEC, l, TF_SELF_LNB), H, c->emb, c);
    tf_linear(x, t->q, a, H, c->emb, cols, tf_weight(p, TF_DEC, l, TF_SELF_WQKV), bias);
}

static void self_step(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int l, int H)
{
    int d = c->emb, L = c->dec_depth;
    long ld = (long)L * 2 * d, row = (long)t->Tmax * ld;
    tf_blk k = {t->n, t->st, NULL, NULL};
    const real *g = tf_t(p, TF_DEC, l, TF_SELF_LNS), *b = tf_t(p, TF_DEC, l, TF_SELF_LNB);
    self_in(x, t, c, p, l, H, &k, 3 * d, tf_t(p, TF_DEC, l, TF_SELF_BQKV));
    real *slot = t->cache + (long)t->t * ld + (long)l * 2 * d; /* this position's key | value */
    x->b->copy_rows(slot, (int)row, t->q + d, 3 * d, H, 2 * d);
    tf_att att = {H, c->heads, 1, t->t + 1, d / c->heads, t->q, 3 * d, 3 * d, t->cache + (long)l * 2 * d,
                  t->cache + (long)l * 2 * d + d, (int)ld, row, NULL, NULL, t->t + 1, 0, 0};
    /* Marian's pre-norm decoding (nmt_config.marian_kv): the cache holds keys and values of the
     * stream before the norm, which the first position does not yet read */
    int raw = c->marian_kv && !c->post_norm;
    if (raw && t->t > 0) raw_kv(x, t, c, p, l, H, slot, (int)row);
    tf_att_forward(x, &att, t->P, t->P, NULL, t->ctx, d, d);
    if (raw && t->t == 0) raw_kv(x, t, c, p, l, H, slot, (int)row);
    tf_linear(x, t->tmp, t->ctx, H, d, d, tf_weight(p, TF_DEC, l, TF_SELF_WO), tf_t(p, TF_DEC, l, TF_SELF_BO));
    block_done(x, t, &k, g, b, H, c);
}

/* An SSRU layer (nmt_config.ssru): its cell of the previous position read from the cache, this
 * position's written there, so that the search's reordering of the cache carries it. */
static void ssru_layer_step(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int l, int H)
{
    int d = c->emb;
    long ld = (long)c->dec_depth * 2 * d, row = (long)t->Tmax * ld;
    tf_blk k = {t->n, t->st, NULL, NULL};
    self_in(x, t, c, p, l, H, &k, 2 * d, NULL);
    real *cell = t->cache + (long)t->t * ld + (long)l * 2 * d;
    const real *prev = t->t ? cell - ld : NULL;
    /* scratch: t->tmp holds [H, max(3d, f)], room for the output and two [H, d] more */
    ssru_step(x, cell, (int)row, t->tmp, d, t->q, 2 * d, tf_t(p, TF_DEC, l, TF_SELF_BQKV), prev, (int)row, t->tmp + (long)H * d,
              d, t->tmp + 2L * H * d, t->one, H, d);
    block_done(x, t, &k, tf_t(p, TF_DEC, l, TF_SELF_LNS), tf_t(p, TF_DEC, l, TF_SELF_LNB), H, c);
}

static void cross_step(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int l, int H,
                       const int *src_of, const int *rowlen)
{
    int d = c->emb;
    tf_blk k = {t->n, t->st, NULL, NULL};
    const real *g = tf_t(p, TF_DEC, l, TF_CTX_LNS), *b = tf_t(p, TF_DEC, l, TF_CTX_LNB);
    const real *a = tf_block_in(x, &k, t->x, g, b, H, d, c);
    tf_linear(x, t->q, a, H, d, d, tf_weight(p, TF_DEC, l, TF_CTX_WQ), tf_t(p, TF_DEC, l, TF_CTX_BQ));
    tf_att att = {H, c->heads, 1, t->enc.Tx, d / c->heads, t->q, d, d, t->kv[l], t->kv[l] + d, 2 * d,
                  (long)t->enc.Tx * 2 * d, src_of, rowlen, t->enc.Tx, 0, 0};
    tf_att_forward(x, &att, t->Pc, t->Pc, NULL, t->ctx, d, d);
    tf_linear(x, t->tmp, t->ctx, H, d, d, tf_weight(p, TF_DEC, l, TF_CTX_WO), tf_t(p, TF_DEC, l, TF_CTX_BO));
    block_done(x, t, &k, g, b, H, c);
}

static void ffn_step(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int l, int H)
{
    static const int act[3] = {BK_RELU, BK_GELU, BK_SWISH};
    int d = c->emb, f = c->ffn;
    tf_blk k = {t->n, t->st, NULL, NULL};
    const real *g = tf_t(p, TF_DEC, l, TF_FFN_LNS), *b = tf_t(p, TF_DEC, l, TF_FFN_LNB);
    const real *a = tf_block_in(x, &k, t->x, g, b, H, d, c);
    tf_linear(x, t->pre, a, H, d, f, tf_weight(p, TF_DEC, l, TF_FFN_W1), tf_t(p, TF_DEC, l, TF_FFN_B1));
    x->b->act_rows(act[c->ffn_act], t->pre, f, t->pre, f, NULL, H, f);
    tf_linear(x, t->tmp, t->pre, H, f, d, tf_weight(p, TF_DEC, l, TF_FFN_W2), tf_t(p, TF_DEC, l, TF_FFN_B2));
    block_done(x, t, &k, g, b, H, c);
}

/* The attention reported, from the layer whose cross-attention weights t->Pc holds: the head
 * the config names (nmt_config.align_head), or the heads' mean. */
static void report_attention(const bk_ctx *x, tf_infer *t, const nmt_config *c, int H, real *alpha)
{
    int Tx = t->enc.Tx, h = c->heads;
    if (c->align_head) {
        x->b->copy_rows(alpha, Tx, t->Pc + (long)(c->align_head - 1) * Tx, h * Tx, H, Tx);
        return;
    }
    bk_batch s = {H, 1, 0, 0, (long)h * Tx, 0, Tx, 0, NULL};
    x->b->gemm_batched(0, 0, 1, Tx, h, t->ones, h, t->Pc, Tx, 0, alpha, Tx, &s);
}

const real *tf_infer_step(const bk_ctx *x, tf_infer *t, const nmt_config *c, const params *p, int H, const int *src_of,
                          const int *yprev, const int *rowlen, real *alpha)
{
    const backend_ops *bk = x->b;
    int d = c->emb, pt = c->max_pos && t->t >= c->max_pos ? c->max_pos - 1 : t->t;
    /* y⁰ = √d E[y_{t-1}] + P_t, the first position's word row zero */
    const real *P = c->max_pos ? p->tf_pos[TF_DEC] + (long)pt * d : t->pos + (long)t->t * d;
    bk->zero_rows(t->x, d, H, d);
    bk->add_rows(t->x, d, t->x, d, P, 0, H, d);
    bk->gather_rows(t->tmp, p->Et, yprev, H, d);
    bk->axpy_diff_rows(t->x, d, t->scale, t->tmp, d, NULL, 0, H, d);
    int al = c->align_layer ? c->align_layer - 1 : c->dec_depth - 1;
    for (int l = 0; l < c->dec_depth; l++) {
        if (c->ssru) ssru_layer_step(x, t, c, p, l, H);
        else self_step(x, t, c, p, l, H);
        cross_step(x, t, c, p, l, H, src_of, rowlen);
        if (l == al) report_attention(x, t, c, H, alpha);
        ffn_step(x, t, c, p, l, H);
    }
    const real *top = t->x;
    if (!c->post_norm) {
        bk->layer_norm(t->y, d, t->st, t->x, d, p->tf_top[TF_DEC][0], p->tf_top[TF_DEC][1], H, d, (real)c->ln_eps);
        top = t->y;
    }
    t->t++;
    return top;
}

void tf_infer_logits(const bk_ctx *x, const nmt_config *c, const params *p, const real *top, int H, real *logits)
{
    int d = c->emb, V = c->tgt_vocab;
    x->b->repeat_row(logits, p->out_bias, H, V);
    if (c->tied_emb) mm(x, 0, 1, H, V, d, top, d, p->Et, d, 1, logits, V);
    else mmw(x, H, V, d, top, d, PW(p, out_W), 1, logits, V);
}

void tf_infer_reorder(const bk_ctx *x, tf_infer *t, const nmt_config *c, const int *parent, int n)
{
    long ld = (long)c->dec_depth * 2 * c->emb, row = (long)t->Tmax * ld;
    if (n > 0 && t->t > 0) x->b->gather_rows_ld(t->spare, row, t->cache, row, parent, n, (long)t->t * ld);
    real *sw = t->cache;
    t->cache = t->spare, t->spare = sw;
}
