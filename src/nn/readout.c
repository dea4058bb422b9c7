/* readout.c: t~_i = U_o s_i + V_o ȳ_{i-1} + C_o c_i + b_o, t_i,k = max(t~_i,2k-1, t~_i,2k),
 * p(y_i) = softmax(W_o t_i + b_w) (MODEL.md section 2; the deep output reads the new state s_i).
 * Backward of softmax + NLL: dlogits = scale · (p - onehot(y)). With label smoothing ε (training
 * only) the loss per token is (1-ε)(-log p(y)) + ε (1/Ky) Σ_k -log p(k), whose gradient is
 * scale · (p - (1-ε) onehot(y) - ε/Ky) (docs/TRAINING.md). With tied embeddings W_o is Ey^T.
 * The maxout and the softmax run as backend kernels. The softmax layer's product adds onto rows
 * that already hold the bias b_w (beta = 1), which spares the BLAS its pass that zeroes the
 * output and the softmax its pass adding b_w. */

#include "backend/backend.h"
#include "base/fault.h"
#include "nn/readout.h"

/* z [rows, Ky] += t [rows, l] · W_o: out_W [l, Ky], or with tied embeddings Et^T (Et [Ky, m], m = l) */
static void logits_add(const bk_ctx *x, real *z, const real *t, int rows, const nmt_config *c, const params *p)
{
    int l = c->maxout, V = c->tgt_vocab;
    if (c->tied_emb) mm(x, 0, 1, rows, V, l, t, l, p->Et, l, 1, z, V);
    else mm(x, 0, 0, rows, V, l, t, l, p->out_W, V, 1, z, V);
}

void out_step_hidden(const bk_ctx *x, real *tt, real *t, const real *s, const real *E, const real *ctx, const nmt_config *c,
                     const params *p, int H)
{
    int n = c->hid, m = c->emb, l = c->maxout, cd = ctx_dim(c);
    mmw(x, H, 2 * l, n, s, n, PW(p, out_U), 0, tt, 2 * l);
    mmw(x, H, 2 * l, m, E, m, PW(p, out_V), 1, tt, 2 * l);
    mmw(x, H, 2 * l, cd, ctx, cd, PW(p, out_C), 1, tt, 2 * l);
    x->b->maxout(t, NULL, tt, p->out_b, NULL, H, l);
}

void out_step(const bk_ctx *x, real *z, real *tt, real *t, const real *s, const real *E, const real *ctx, const nmt_config *c,
              const params *p, int H)
{
    out_step_hidden(x, tt, t, s, E, ctx, c, p, H);
    x->b->repeat_row(z, p->out_bias, H, c->tgt_vocab);
    logits_add(x, z, t, H, c, p);
}

void out_layout(out_ws *w, arena *a, const nmt_config *c, int B, int Ty)
{
    size_t TB = (size_t)Ty * B, l = c->maxout;
    w->rows = arena_take(a, sizeof(int) * TB);
    w->TT = arena_take(a, sizeof(real) * TB * 2 * l);
    w->which = arena_take(a, TB * l);
    w->Tg = arena_take(a, sizeof(real) * TB * l);
    w->logits = arena_take(a, sizeof(real) * TB * c->tgt_vocab);
    w->dTg = arena_take(a, sizeof(real) * TB * l);
    w->nll = arena_take(a, sizeof(double) * TB);
    w->rsum = arena_take(a, sizeof(double) * TB);
    w->bias_part = arena_take(a, sizeof(real) * (TB / OUT_BLOCK + 1) * c->tgt_vocab);
    w->mask = arena_take(a, sizeof(real) * TB * l);
    w->hrows = arena_take_host(a, sizeof(int) * TB);
    w->hnll = arena_take_host(a, sizeof(double) * TB);
    w->hmask = arena_take_host(a, sizeof(real) * TB * l);
}

double out_forward(const bk_ctx *x, out_ws *w, const dec_ws *d, const nmt_config *c, const params *p, const batch *bt,
                   real *logp_tok)
{
    int B = bt->B, Ty = bt->Ty, n = c->hid, m = c->emb, l = c->maxout, cd = ctx_dim(c), V = c->tgt_vocab;
    int TB = Ty * B;
    mmw(x, TB, 2 * l, n, d->S + (size_t)B * n, n, PW(p, out_U), 0, w->TT, 2 * l);
    mmw(x, TB, 2 * l, m, d->Eprev, m, PW(p, out_V), 1, w->TT, 2 * l);
    mmw(x, TB, 2 * l, cd, d->C, cd, PW(p, out_C), 1, w->TT, 2 * l);
    w->N = 0;
    for (int i = 0; i < Ty; i++)
        for (int b = 0; b < B; b++)
            if (i < bt->ylen[b]) w->hrows[w->N++] = i * B + b;
    const backend_ops *bk = x->b;
    bk->copy_in(w->rows, w->hrows, sizeof(int) * w->N);
    bk->maxout(w->Tg, w->which, w->TT, p->out_b, w->rows, w->N, l);
    if (w->dropout > 0 && w->drop_rng) { /* inverted dropout on t_i (MODEL.md section 5, Feng et al.) */
        rng_dropout_mask(w->drop_rng, w->hmask, (size_t)w->N * l, w->dropout); /* drawn last, after net_forward's */
        bk->copy_in(w->mask, w->hmask, sizeof(real) * w->N * l);
        bk->mul_rows(w->Tg, l, w->Tg, l, w->mask, l, w->N, l);
    }
    bk->repeat_row(w->logits, p->out_bias, w->N, V);
    logits_add(x, w->logits, w->Tg, w->N, c, p);
    if (logp_tok) bk->zero_rows(logp_tok, TB, 1, TB);
    bk->softmax_nll(w->logits, w->rsum, w->nll, logp_tok, w->rows, bt->dev_y, w->N, V, w->smoothing);
    /* the loss: each token's read back once per batch and summed on the host, in order */
    bk->copy_out(w->hnll, w->nll, sizeof(double) * w->N);
    double loss = 0;
    for (int r = 0; r < w->N; r++) loss += w->hnll[r];
    return loss;
}

void out_backward(const bk_ctx *x, out_ws *w, dec_ws *d, const nmt_config *c, const params *p, params *g, const batch *bt,
                  real scale)
{
    int B = bt->B, Ty = bt->Ty, n = c->hid, m = c->emb, l = c->maxout, cd = ctx_dim(c), V = c->tgt_vocab;
    int TB = Ty * B;
    const backend_ops *bk = x->b;
    /* dlogits = scale (p - q), q the one-hot or its smoothed form, and the bias gradient per block
     * of OUT_BLOCK rows; in bf16 training also dlogits' bf16 form, which the two products read */
    bk_mix *mix = x->mix;
    uint16_t *z16 = mix && w->N > 0 ? x->b->mix->hold(mix, w->logits, w->N, V) : NULL;
    bk->softmax_nll_backward(w->logits, g->out_bias, w->bias_part, w->rsum, w->rows, bt->dev_y, w->N, V, scale,
                             FAULT(FAULT_LABEL_SMOOTHING) ? 0 : (real)w->smoothing, OUT_BLOCK, z16);
    if (c->tied_emb) { /* Et's gradient sums this use and the embedding's (dec_backward adds that) */
        if (!FAULT(FAULT_TIED_OUT)) mm(x, 1, 0, V, l, w->N, w->logits, V, w->Tg, l, 1, g->Et, l);
        mm(x, 0, 0, w->N, l, V, w->logits, V, p->Et, l, 0, w->dTg, l);
    } else {
        mm(x, 1, 0, l, V, w->N, w->Tg, l, w->logits, V, 1, g->out_W, V);
        mm(x, 0, 1, w->N, l, V, w->logits, V, p->out_W, V, 0, w->dTg, l);
    }
    if (z16) x->b->mix->release(mix);
    if (w->dropout > 0 && w->drop_rng) bk->mul_rows(w->dTg, l, w->dTg, l, w->mask, l, w->N, l);
    /* maxout: the gradient goes to the winner of each pair; padding rows get none */
    bk->zero_rows(w->TT, 2 * l, TB, 2 * l);
    bk->maxout_backward(w->TT, w->dTg, w->which, w->rows, w->N, l);
    real *dTT = w->TT;
    mm(x, 1, 0, n, 2 * l, TB, d->S + (size_t)B * n, n, dTT, 2 * l, 1, g->out_U, 2 * l);
    mm(x, 1, 0, m, 2 * l, TB, d->Eprev, m, dTT, 2 * l, 1, g->out_V, 2 * l);
    mm(x, 1, 0, cd, 2 * l, TB, d->C, cd, dTT, 2 * l, 1, g->out_C, 2 * l);
    if (!FAULT(FAULT_OUT_BIAS)) colsum_add(x, g->out_b, dTT, TB, 2 * l, 2 * l);
    mm(x, 0, 1, TB, n, 2 * l, dTT, 2 * l, p->out_U, 2 * l, 0, d->dS, n);
    mm(x, 0, 1, TB, m, 2 * l, dTT, 2 * l, p->out_V, 2 * l, 0, d->dEprev, m);
    mm(x, 0, 1, TB, cd, 2 * l, dTT, 2 * l, p->out_C, 2 * l, 0, d->dC, cd);
}
