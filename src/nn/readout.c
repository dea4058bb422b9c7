/* readout.c: t~_i = U_o s_i + V_o ȳ_{i-1} + C_o c_i + b_o, t_i,k = max(t~_i,2k-1, t~_i,2k),
 * p(y_i) = softmax(W_o t_i + b_w) (MODEL.md section 2; the deep output reads the new state s_i).
 * Backward of softmax + NLL: dlogits = scale · (p - onehot(y)). */
#include <string.h>

#include "backend/cpu/blas.h"
#include "base/fault.h"
#include "nn/readout.h"
#include "backend/cpu/vec.h"

/* t_k = max(t~_2k + b_2k, t~_2k+1 + b_2k+1); which_k records the winner for backward. */
static void maxout_row(real *t, unsigned char *which, const real *tt, const real *b, int l)
{
    for (int k = 0; k < l; k++) {
        real a = tt[2 * k] + b[2 * k], c = tt[2 * k + 1] + b[2 * k + 1];
        if (which) which[k] = c > a;
        t[k] = c > a ? c : a;
    }
}

/* Z[H,V] = the bias in every row: the softmax layer's product then adds onto it (beta = 1),
 * which spares the BLAS its pass that zeroes the output and the softmax its pass adding b_w. */
static void bias_rows(real *Z, const real *bias, int H, int V)
{
#pragma omp parallel for schedule(static)
    for (int h = 0; h < H; h++) memcpy(Z + (size_t)h * V, bias, sizeof(real) * V);
}

void out_step(real *z, real *tt, real *t, const real *s, const real *E, const real *ctx, const nmt_config *c,
              const params *p, int H)
{
    int n = c->hid, m = c->emb, l = c->maxout, cd = ctx_dim(c), V = c->tgt_vocab;
    mm(0, 0, H, 2 * l, n, s, n, p->out_U, 2 * l, 0, tt, 2 * l);
    mm(0, 0, H, 2 * l, m, E, m, p->out_V, 2 * l, 1, tt, 2 * l);
    mm(0, 0, H, 2 * l, cd, ctx, cd, p->out_C, 2 * l, 1, tt, 2 * l);
    for (int h = 0; h < H; h++) maxout_row(t + (size_t)h * l, NULL, tt + (size_t)h * 2 * l, p->out_b, l);
    bias_rows(z, p->out_bias, H, V);
    mm(0, 0, H, V, l, t, l, p->out_W, V, 1, z, V);
}

void out_layout(out_ws *w, arena *a, const nmt_config *c, int B, int Ty)
{
    size_t TB = (size_t)Ty * B, l = c->maxout;
    w->rows = arena_take(a, sizeof(int) * TB);
    w->TT = arena_take(a, sizeof(real) * TB * 2 * l);
    w->which = arena_take(a, TB * l);
    w->Tg = arena_take(a, sizeof(real) * TB * l);
    w->logp = arena_take(a, sizeof(real) * TB * c->tgt_vocab);
    w->dTg = arena_take(a, sizeof(real) * TB * l);
    w->nll = arena_take(a, sizeof(double) * TB);
    w->rsum = arena_take(a, sizeof(double) * TB);
    w->bias_part = arena_take(a, sizeof(real) * (TB / OUT_BLOCK + 1) * c->tgt_vocab);
    w->mask = arena_take(a, sizeof(real) * TB * l);
}

double out_forward(out_ws *w, const dec_ws *d, const nmt_config *c, const params *p, const batch *bt,
                   real *logp_tok)
{
    int B = bt->B, Ty = bt->Ty, n = c->hid, m = c->emb, l = c->maxout, cd = ctx_dim(c), V = c->tgt_vocab;
    int TB = Ty * B;
    mm(0, 0, TB, 2 * l, n, d->S + (size_t)B * n, n, p->out_U, 2 * l, 0, w->TT, 2 * l);
    mm(0, 0, TB, 2 * l, m, d->Eprev, m, p->out_V, 2 * l, 1, w->TT, 2 * l);
    mm(0, 0, TB, 2 * l, cd, d->C, cd, p->out_C, 2 * l, 1, w->TT, 2 * l);
    w->N = 0;
    for (int i = 0; i < Ty; i++)
        for (int b = 0; b < B; b++)
            if (i < bt->ylen[b]) w->rows[w->N++] = i * B + b;
#pragma omp parallel for schedule(static)
    for (int r = 0; r < w->N; r++) {
        size_t row = w->rows[r];
        maxout_row(w->Tg + (size_t)r * l, w->which + row * l, w->TT + row * 2 * l, p->out_b, l);
    }
    if (w->dropout > 0 && w->drop_rng) { /* inverted dropout on t_i (MODEL.md section 5, Feng et al.) */
        real keep = (real)(1 / (1 - w->dropout));
        for (size_t q = 0; q < (size_t)w->N * l; q++) {
            w->mask[q] = rng_uniform(w->drop_rng) < w->dropout ? 0 : keep;
            w->Tg[q] *= w->mask[q];
        }
    }
    bias_rows(w->logp, p->out_bias, w->N, V);
    mm(0, 0, w->N, V, l, w->Tg, l, p->out_W, V, 1, w->logp, V);
    if (logp_tok) memset(logp_tok, 0, sizeof(real) * TB);
#pragma omp parallel for schedule(static)
    for (int r = 0; r < w->N; r++) { /* the row keeps e^{z - max} for backward */
        real *z = w->logp + (size_t)r * V;
        int row = w->rows[r];
        real zy = z[bt->y[row]];
        double sum;
        real lp = zy - vec_logsumexp(z, z, V, &sum);
        w->rsum[r] = 1 / sum;
        if (logp_tok) logp_tok[row] = lp;
        w->nll[r] = -(double)lp;
    }
    double loss = 0;
    for (int r = 0; r < w->N; r++) loss += w->nll[r];
    return loss;
}

void out_backward(out_ws *w, dec_ws *d, const nmt_config *c, const params *p, params *g, const batch *bt,
                  real scale)
{
    int B = bt->B, Ty = bt->Ty, n = c->hid, m = c->emb, l = c->maxout, cd = ctx_dim(c), V = c->tgt_vocab;
    int TB = Ty * B;
    /* dlogits = scale (p - onehot(y)), with the bias gradient's column sums taken in the same
     * pass while each row is in cache: per block of OUT_BLOCK rows, then the blocks in order */
    int nblk = (w->N + OUT_BLOCK - 1) / OUT_BLOCK;
#pragma omp parallel for schedule(static)
    for (int q = 0; q < nblk; q++) {
        real *part = w->bias_part + (size_t)q * V;
        memset(part, 0, sizeof(real) * V);
        for (int r = q * OUT_BLOCK; r < w->N && r < (q + 1) * OUT_BLOCK; r++) {
            real *z = w->logp + (size_t)r * V, f = (real)(scale * w->rsum[r]);
            for (int k = 0; k < V; k++) {
                real v = z[k] * f;
                z[k] = v;
                part[k] += v;
            }
            int y = bt->y[w->rows[r]];
            z[y] -= scale;
            part[y] -= scale;
        }
    }
    for (int q = 0; q < nblk; q++) vec_axpy(g->out_bias, 1, w->bias_part + (size_t)q * V, V);
    mm(1, 0, l, V, w->N, w->Tg, l, w->logp, V, 1, g->out_W, V);
    mm(0, 1, w->N, l, V, w->logp, V, p->out_W, V, 0, w->dTg, l);
    if (w->dropout > 0 && w->drop_rng)
        for (size_t q = 0; q < (size_t)w->N * l; q++) w->dTg[q] *= w->mask[q];
    /* maxout: the gradient goes to the winner of each pair; padding rows get none */
    memset(w->TT, 0, sizeof(real) * TB * 2 * l);
    for (int r = 0; r < w->N; r++) {
        size_t row = w->rows[r];
        real *dtt = w->TT + row * 2 * l;
        const unsigned char *wh = w->which + row * l;
        for (int k = 0; k < l; k++) dtt[2 * k + wh[k]] = w->dTg[(size_t)r * l + k];
    }
    real *dTT = w->TT;
    mm(1, 0, n, 2 * l, TB, d->S + (size_t)B * n, n, dTT, 2 * l, 1, g->out_U, 2 * l);
    mm(1, 0, m, 2 * l, TB, d->Eprev, m, dTT, 2 * l, 1, g->out_V, 2 * l);
    mm(1, 0, cd, 2 * l, TB, d->C, cd, dTT, 2 * l, 1, g->out_C, 2 * l);
    if (!FAULT(FAULT_OUT_BIAS)) colsum_add(g->out_b, dTT, TB, 2 * l, 2 * l);
    mm(0, 1, TB, n, 2 * l, dTT, 2 * l, p->out_U, 2 * l, 0, d->dS, n);
    mm(0, 1, TB, m, 2 * l, dTT, 2 * l, p->out_V, 2 * l, 0, d->dEprev, m);
    mm(0, 1, TB, cd, 2 * l, dTT, 2 * l, p->out_C, 2 * l, 0, d->dC, cd);
}
