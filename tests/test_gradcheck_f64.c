/* test_gradcheck_f64.c: central finite differences in float64 against every backward pass:
 * the GRU step, the attention step (with and without the ξ window of Markov/LocFer) and the
 * readout with its loss (inputs and weights), and every parameter tensor of every architecture
 * on variable-length batches, with the training terms of docs/TRAINING.md (label smoothing,
 * variational dropout, tied embeddings, guided alignment's ce and mse costs) on. Then it switches on,
 * one at a time, faults that drop a backward term, and checks that the comparison catches each. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "base/fault.h"
#include "nn/gru.h"
#include "nn/attention.h"
#include "nn/net.h"
#include "fdcheck.h"
#include "test.h"

/* the compute context of the models this file makes: the default device's */
#ifndef TX
#define TX bk_ctx_default()
#endif

static rng R;
static int quiet;              /* fault self-test: stop at the first mismatch, print nothing */
static double worst_rel[NMT_ARCH_RNN_COUNT]; /* largest relative error per model */

static void fill(real *x, size_t n, double sd)
{
    for (size_t i = 0; i < n; i++) x[i] = (real)(sd * rng_normal(&R));
}

static int fd_check(const char *what, real *x, size_t n, const real *analytic, loss_fn f, void *ctx, double *maxrel)
{
    return fd_compare(what, x, n, analytic, f, ctx, maxrel, quiet);
}

/* ---------------------------------------------------------------- GRU step */
struct gru_ctx {
    int B, n;
    real *a, *hp, *U, *Uh, *w, *h, *tmp;
    gru_cache c;
    unsigned char *mask;
    const real *dm;     /* a fixed dropout mask on the recurrent products' hp, or NULL */
};

static double gru_loss(void *p)
{
    struct gru_ctx *g = p;
    gru_forward(TX, g->h, g->n, g->c, g->a, 3 * g->n, g->hp, g->n, bk_w32(g->U), bk_w32(g->Uh), g->mask, g->dm, g->B, g->n, g->tmp);
    double L = 0;
    for (int i = 0; i < g->B * g->n; i++) L += g->w[i] * g->h[i];
    return L;
}

static void test_gru(int drop)
{
    int B = 4, n = 5;
    struct gru_ctx g = {B, n, 0, 0, 0, 0, 0, 0, 0, {0, 0, 0, 0}, 0, NULL};
    real *buf = calloc(64 * B * n + 16 * n * n, sizeof(real)), *q = buf;
    g.a = q; q += 3 * B * n; g.hp = q; q += B * n; g.U = q; q += 2 * n * n; g.Uh = q; q += n * n;
    g.w = q; q += B * n; g.h = q; q += B * n; g.tmp = q; q += 3 * B * n;
    g.c.z = q; q += B * n; g.c.r = q; q += B * n; g.c.hc = q; q += B * n; g.c.rh = q; q += B * n;
    real *da = q; q += 3 * B * n; real *dhp = q; q += B * n; real *dU = q; q += 2 * n * n;
    real *dUh = q; q += n * n; real *hd = q; q += B * n; real *dm = q; q += B * n; real *tmp2 = q;
    unsigned char mask[4] = {1, 1, 0, 1}; /* row 2 is padding: it copies its state */
    g.mask = mask;
    fill(g.a, 3 * B * n, 1); fill(g.hp, B * n, 0.8); fill(g.U, 2 * n * n, 0.5); fill(g.Uh, n * n, 0.5);
    fill(g.w, B * n, 1);
    for (int i = 0; i < B * n; i++) dm[i] = rng_below(&R, 2) ? 2 : 0; /* dropout 0.5 */
    g.dm = drop ? dm : NULL;
    gru_loss(&g);
    memset(dhp, 0, sizeof(real) * B * n);
    gru_backward(TX, da, 3 * n, dhp, g.w, g.c, g.hp, n, g.U, g.Uh, mask, g.dm, B, n, tmp2);
    memset(dU, 0, sizeof(real) * 2 * n * n);
    memset(dUh, 0, sizeof(real) * n * n);
    if (drop) gru_drop_states(TX, hd, n, g.hp, n, dm, 1, B, n);
    mm(TX, 1, 0, n, 2 * n, B, drop ? hd : g.hp, n, da, 3 * n, 1, dU, 2 * n);
    mm(TX, 1, 0, n, n, B, g.c.rh, n, da + 2 * n, 3 * n, 1, dUh, n);
    double mr = 0;
    CHECK(fd_check("gru.a", g.a, 3 * B * n, da, gru_loss, &g, &mr) == 0);
    CHECK(fd_check("gru.h_prev", g.hp, B * n, dhp, gru_loss, &g, &mr) == 0);
    CHECK(fd_check("gru.U", g.U, 2 * n * n, dU, gru_loss, &g, &mr) == 0);
    CHECK(fd_check("gru.Uh", g.Uh, n * n, dUh, gru_loss, &g, &mr) == 0);
    printf("gru step%s: max relative error %.2e\n", drop ? " with a dropout mask on h_prev" : "", mr);
    free(buf);
}

/* ---------------------------------------------------------------- attention step */
struct att_ctx {
    attn_dims d;
    real *UaH, *q, *v, *H, *w, *alpha, *ctx;
    int *xlen;
    attn_xi *x;
    real *wa;     /* a weight on α too, so that the dα input path is checked */
};

static double att_loss(void *p)
{
    struct att_ctx *a = p;
    attn_forward(TX, a->alpha, a->ctx, a->UaH, a->q, a->v, a->H, a->xlen, NULL, a->x, a->d);
    double L = 0;
    for (int i = 0; i < a->d.B * a->d.hd; i++) L += a->w[i] * a->ctx[i];
    if (a->wa) for (int i = 0; i < a->d.B * a->d.Tx; i++) L += a->wa[i] * a->alpha[i];
    return L;
}

static void test_attention(void)
{
    int B = 3, Tx = 5, na = 4, hd = 6;
    int xlen[3] = {5, 2, 1};
    struct att_ctx a = {{B, Tx, B, na, hd, hd}, 0, 0, 0, 0, 0, 0, 0, xlen, NULL, NULL};
    size_t SB = (size_t)Tx * B;
    real *buf = calloc(SB * na * 2 + SB * hd * 2 + B * (na * 3 + hd * 2 + Tx * 2) + na * 2, sizeof(real)), *q = buf;
    a.UaH = q; q += SB * na; a.q = q; q += B * na; a.v = q; q += na; a.H = q; q += SB * hd;
    a.w = q; q += B * hd; a.alpha = q; q += B * Tx; a.ctx = q; q += B * hd;
    real *dq = q; q += B * na; real *dUaH = q; q += SB * na; real *dH = q; q += SB * hd;
    real *dv_rows = q; q += B * na; real *dv = q; q += na; real *tmp = q;
    fill(a.UaH, SB * na, 0.7); fill(a.q, B * na, 0.7); fill(a.v, na, 1); fill(a.H, SB * hd, 1);
    fill(a.w, B * hd, 1);
    att_loss(&a);
    attn_backward(TX, dq, dUaH, dH, dv_rows, a.w, NULL, a.alpha, a.UaH, a.q, a.v, a.H, xlen, NULL, a.d, tmp);
    colsum_add(TX, dv, dv_rows, B, na, na);
    double mr = 0;
    CHECK(fd_check("attn.UaH", a.UaH, SB * na, dUaH, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn.q", a.q, B * na, dq, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn.v", a.v, na, dv, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn.H", a.H, SB * hd, dH, att_loss, &a, &mr) == 0);
    /* padding never receives attention */
    CHECK(a.alpha[1 * Tx + 2] == 0 && a.alpha[2 * Tx + 1] == 0);
    printf("attention step: max relative error %.2e\n", mr);
    /* again with the ξ window (K = 3) and a direct gradient on α */
    int K = 3;
    real *xi = calloc(SB * K, sizeof(real)), *M = malloc(sizeof(real) * K * na), *dxi = calloc(SB * K, sizeof(real));
    real *dM_rows = calloc((size_t)B * K * na, sizeof(real)), *dM = calloc((size_t)K * na, sizeof(real)), *wa = malloc(sizeof(real) * B * Tx);
    fill(M, (size_t)K * na, 0.7);
    fill(wa, (size_t)B * Tx, 1);
    for (int b = 0; b < B; b++)
        for (int j = 0; j < xlen[b]; j++) fill(xi + ((size_t)b * Tx + j) * K, K, 0.5);
    attn_xi x = {K, M, xi, dxi, dM_rows};
    a.x = &x;
    a.wa = wa;
    memset(dUaH, 0, sizeof(real) * SB * na);
    memset(dH, 0, sizeof(real) * SB * hd);
    memset(dv_rows, 0, sizeof(real) * B * na);
    att_loss(&a);
    attn_backward(TX, dq, dUaH, dH, dv_rows, a.w, wa, a.alpha, a.UaH, a.q, a.v, a.H, xlen, &x, a.d, tmp);
    memset(dv, 0, sizeof(real) * na);
    colsum_add(TX, dv, dv_rows, B, na, na);
    colsum_add(TX, dM, dM_rows, B, K * na, K * na);
    mr = 0;
    CHECK(fd_check("attn+xi.UaH", a.UaH, SB * na, dUaH, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn+xi.q", a.q, B * na, dq, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn+xi.v", a.v, na, dv, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn+xi.H", a.H, SB * hd, dH, att_loss, &a, &mr) == 0);
    CHECK(fd_check("attn+xi.M", M, (size_t)K * na, dM, att_loss, &a, &mr) == 0);
    /* ξ only at real positions is read */
    int badxi = 0;
    for (int b = 0; b < B; b++) {
        double m2 = 0;
        badxi += fd_check("attn+xi.xi", xi + (size_t)b * Tx * K, (size_t)xlen[b] * K, dxi + (size_t)b * Tx * K, att_loss, &a, &m2);
        if (m2 > mr) mr = m2;
    }
    CHECK(badxi == 0);
    printf("attention step with the xi window and a gradient on alpha: max relative error %.2e\n", mr);
    free(xi); free(M); free(dxi); free(dM_rows); free(dM); free(wa);
    free(buf);
}

/* ---------------------------------------------------------------- whole models */
struct model_ctx {
    double dropout;     /* with dropout the mask is redrawn from the same seed at every forward */
    net_reg reg;        /* the training-only terms (label smoothing ...), as dropout */
    rng drop;
    nmt_config c;
    param_table pt;
    real *P, *G;
    params p, g;
    batch bt;
    net_ws ws;
    guide_ws *guide;    /* guided alignment on links (test_guided), or NULL */
    batch_links links;
};

static double model_loss(void *p)
{
    struct model_ctx *m = p;
    /* training mode when anything of it is on; masks from the same seed at every evaluation */
    int train = m->dropout > 0 || m->reg.label_smoothing > 0 || m->reg.dropout_emb > 0 || m->reg.dropout_rnn > 0 || m->guide;
    rng_seed(&m->drop, 77);
    net_set_dropout(&m->ws, m->dropout, train ? &m->drop : NULL);
    net_set_reg(&m->ws, &m->reg);
    net_set_guide(&m->ws, m->guide);
    net_set_links(&m->ws, m->guide ? &m->links : NULL);
    double nll = net_forward(TX, &m->ws, &m->c, &m->p, &m->bt, NULL);
    /* FertDec's and guided alignment's costs included */
    return (nll + net_extra_cost(&m->ws, &m->c) + net_guided_cost(&m->ws)) / m->bt.B;
}

/* x: sentence lengths include EOS; ids random in [2, V) (the words), EOS at the end. */
static void make_batch(batch *bt, int B, const int *xl, const int *yl, int Kx, int Ky)
{
    bt->B = B; bt->Tx = 0; bt->Ty = 0;
    for (int b = 0; b < B; b++) {
        if (xl[b] > bt->Tx) bt->Tx = xl[b];
        if (yl[b] > bt->Ty) bt->Ty = yl[b];
    }
    bt->x = calloc((size_t)bt->Tx * B, sizeof(int));
    bt->y = calloc((size_t)bt->Ty * B, sizeof(int));
    bt->xlen = malloc(sizeof(int) * B);
    bt->ylen = malloc(sizeof(int) * B);
    for (int b = 0; b < B; b++) {
        bt->xlen[b] = xl[b];
        bt->ylen[b] = yl[b];
        for (int t = 0; t < xl[b]; t++) bt->x[t * B + b] = t == xl[b] - 1 ? 0 : 1 + (int)rng_below(&R, Kx - 1);
        for (int t = 0; t < yl[b]; t++) bt->y[t * B + b] = t == yl[b] - 1 ? 0 : 1 + (int)rng_below(&R, Ky - 1);
    }
}

static int sorted_batch; /* batches sorted by source length, as batch_fill sorts them */

/* A model of config c on a batch of the first B (<= 3) sentences of lengths below. */
static void model_init_with(struct model_ctx *m, nmt_config c, int B)
{
    memset(m, 0, sizeof *m);
    m->c = c;
    param_table_build(&m->pt, &m->c);
    m->P = malloc(sizeof(real) * m->pt.total);
    m->G = malloc(sizeof(real) * m->pt.total);
    fill(m->P, m->pt.total, 0.4); /* not the paper's init: no gradient should be trivially zero */
    params_point(&m->p, &m->pt, m->P);
    params_point(&m->g, &m->pt, m->G);
    int xl[3] = {4, 2, 5}, yl[3] = {3, 5, 1};
    if (sorted_batch) { /* longest source first: the encoder runs each step on the rows still inside */
        xl[0] = 5;
        xl[2] = 2;
    }
    make_batch(&m->bt, B, xl, yl, c.src_vocab, c.tgt_vocab);
    NMT_ASSERT(net_ws_reserve(TX, &m->ws, &m->c, B, m->bt.Tx, m->bt.Ty, NULL) == 0);
}

/* tied: the target embeddings as the softmax layer's weights (emb = maxout = 4) */
static void model_init_tied(struct model_ctx *m, int arch, int tied)
{
    nmt_config c = {arch, 7, 9, 4, 5, 6, tied ? 4 : 3, 1, 0.7, 1.3, tied, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    model_init_with(m, c, 3);
}

static void model_init(struct model_ctx *m, int arch) { model_init_tied(m, arch, 0); }

static void model_free(struct model_ctx *m)
{
    free(m->P); free(m->G);
    free(m->bt.x); free(m->bt.y); free(m->bt.xlen); free(m->bt.ylen);
    net_ws_free(&m->ws);
}

/* Returns the number of mismatching elements over every parameter tensor. */
static int check_model(struct model_ctx *m, double *maxrel)
{
    memset(m->G, 0, sizeof(real) * m->pt.total);
    model_loss(m);
    net_backward(TX, &m->ws, &m->c, &m->p, &m->g, &m->bt, (real)1 / m->bt.B);
    int bad = 0;
    for (int i = 0; i < m->pt.n; i++) {
        const tensor_info *t = &m->pt.t[i];
        double mr = 0;
        int b = fd_check(t->name, m->P + t->offset, (size_t)t->rows * t->cols, m->G + t->offset, model_loss, m, &mr);
        if (!quiet) {
            CHECKF(b == 0, "%s %s: %d elements off", nmt_arch_name(m->c.arch), t->name, b);
            printf("  %-9s %-9s max relative error %.2e\n", nmt_arch_name(m->c.arch), t->name, mr);
        }
        if (mr > *maxrel) *maxrel = mr;
        bad += b;
        if (quiet && bad) break; /* a fault's self-test needs one mismatch, not all */
    }
    return bad;
}

/* The readout and loss on their own: gradients reaching s_i, c_i and ȳ_{i-1}. */
static double readout_loss(void *p)
{
    struct model_ctx *m = p;
    return out_forward(TX, &m->ws.out, &m->ws.dec, &m->c, &m->p, &m->ws.view, NULL) / m->bt.B;
}

static void test_readout(void)
{
    struct model_ctx m;
    model_init(&m, NMT_ARCH_RNNSEARCH);
    int B = m.bt.B, Ty = m.bt.Ty, n = m.c.hid, cd = ctx_dim(&m.c), mm_ = m.c.emb;
    dec_ws *d = &m.ws.dec;
    fill(d->S, (size_t)(Ty + 1) * B * n, 1);
    fill(d->C, (size_t)Ty * B * cd, 1);
    fill(d->Eprev, (size_t)Ty * B * mm_, 1);
    memset(m.G, 0, sizeof(real) * m.pt.total);
    batch_upload(TX, &m.ws.view, &m.bt, &m.ws.bd); /* what net_forward does first */
    readout_loss(&m);
    out_backward(TX, &m.ws.out, d, &m.c, &m.p, &m.g, &m.ws.view, (real)1 / B);
    double mr = 0;
    CHECK(fd_check("readout.s", d->S + (size_t)B * n, (size_t)Ty * B * n, d->dS, readout_loss, &m, &mr) == 0);
    CHECK(fd_check("readout.c", d->C, (size_t)Ty * B * cd, d->dC, readout_loss, &m, &mr) == 0);
    CHECK(fd_check("readout.y", d->Eprev, (size_t)Ty * B * mm_, d->dEprev, readout_loss, &m, &mr) == 0);
    const char *names[] = {"out_U", "out_V", "out_C", "out_b", "out_W", "out_bias"};
    for (int i = 0; i < 6; i++) {
        const tensor_info *t = param_table_find(&m.pt, names[i]);
        CHECK(fd_check(names[i], m.P + t->offset, (size_t)t->rows * t->cols, m.G + t->offset, readout_loss, &m, &mr) == 0);
    }
    printf("readout + loss: max relative error %.2e\n", mr);
    model_free(&m);
}

/* Rows k of w [rows, cols] times v[k] (by_rows), or columns k times v[k]. */
static void scale(real *w, int rows, int cols, const real *v, int by_rows)
{
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < cols; k++) w[(size_t)i * cols + k] *= v[by_rows ? i : k];
}

/* Variational dropout keeps one mask per sentence at every position. For a batch of one sentence
 * the dropped model is then the plain one with rows k of each GRU's U_z|U_r and U_h times its
 * mask's m_k, and columns k of Es and Et times the embeddings' masks: the losses must agree. A
 * mask drawn afresh at each step would not. */
static void test_variational(int arch)
{
    struct model_ctx m;
    nmt_config c = {arch, 7, 9, 4, 5, 6, 3, 1, 0.7, 1.3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    model_init_with(&m, c, 1);
    int n = c.hid, e = c.emb;
    double plain = model_loss(&m);
    m.reg.dropout_emb = m.reg.dropout_rnn = 0.5;
    double dropped = model_loss(&m);
    params *p = &m.p;
    scale(p->Es, c.src_vocab, e, m.ws.mask_src, 0);
    scale(p->Et, c.tgt_vocab, e, m.ws.mask_tgt, 0);
    for (int d = 0; d < enc_dirs(&c); d++) {
        scale(p->enc_U[d], n, 2 * n, m.ws.mask_h[d], 1);
        scale(p->enc_Uh[d], n, n, m.ws.mask_h[d], 1);
    }
    scale(p->dec_U, n, 2 * n, m.ws.mask_h[2], 1);
    scale(p->dec_Uh, n, n, m.ws.mask_h[2], 1);
    m.reg.dropout_emb = m.reg.dropout_rnn = 0;
    double folded = model_loss(&m);
    CHECKF(fabs(dropped - folded) <= 1e-12 * fabs(folded), "%s: variational dropout %.15g, masks folded into the weights %.15g",
           nmt_arch_name(arch), dropped, folded);
    CHECKF(fabs(dropped - plain) > 1e-6, "%s: the masks dropped nothing", nmt_arch_name(arch));
    printf("%s: variational dropout = its masks folded into the weights (%.15g, %.15g; without dropout %.6g)\n",
           nmt_arch_name(arch), dropped, folded, plain);
    model_free(&m);
}

/* Guided alignment on the batch of model_init (source words 3, 1, 4; target words 2, 4, 0):
 * row 0's first target word linked to two source words (a = 1/2 each) and its second to one,
 * row 1's target words 0 and 2 to its one source word (1 and 3 unlinked), row 2 without links.
 * Sorted by target, then source, as links_attach leaves them. */
static int guided_off[4] = {0, 3, 5, 5};
static int guided_lk[10] = {0, 0, 2, 0, 1, 1, 0, 0, 0, 2};

static guide_ws *guided_on(struct model_ctx *m, guide_ws *g, int kind)
{
    NMT_ASSERT(!guide_init(TX, g, kind, 0.7, m->bt.B, m->bt.Tx, m->bt.Ty, NULL));
    m->links = (batch_links){guided_off, guided_lk};
    return m->guide = g;
}

/* The guided cost's gradient on one attention architecture, ce or mse. */
static void test_guided(int arch, int kind)
{
    struct model_ctx m;
    guide_ws g;
    model_init(&m, arch);
    guided_on(&m, &g, kind);
    double mr = 0;
    check_model(&m, &mr);
    CHECKF(m.ws.guide->active && m.ws.guide->cost > 0, "%s: guided alignment's cost was not formed", nmt_arch_name(arch));
    printf("%s with guided alignment (%s, weight 0.7): largest relative gradient error %.2e\n", nmt_arch_name(arch),
           kind == NMT_GUIDED_MSE ? "mse" : "ce", mr);
    guide_free(&g);
    model_free(&m);
}

/* One full check of a model with training terms, tied embeddings or not. */
static void check_variant(int arch, int tied, double dropout, net_reg reg, const char *what)
{
    struct model_ctx m;
    model_init_tied(&m, arch, tied);
    m.dropout = dropout;
    m.reg = reg;
    double mr = 0;
    check_model(&m, &mr);
    printf("%s with %s: largest relative gradient error %.2e\n", nmt_arch_name(arch), what, mr);
    model_free(&m);
}

int main(int argc, char **argv)
{
    (void)argc; (void)argv;
    rng_seed(&R, 20261122);
    test_gru(0);
    test_gru(1);
    test_attention();
    test_readout();
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        struct model_ctx m;
        model_init(&m, arch);
        check_model(&m, &worst_rel[arch]);
        printf("%s: largest relative gradient error over all parameters %.2e\n", nmt_arch_name(arch), worst_rel[arch]);
        model_free(&m);
    }
    /* dropout 0.5 on the maxout output, the same mask in every evaluation (model_loss) */
    {
        struct model_ctx m;
        model_init(&m, NMT_ARCH_RNNSEARCH);
        m.dropout = 0.5;
        double mr = 0;
        check_model(&m, &mr);
        printf("rnnsearch with dropout 0.5: largest relative gradient error %.2e\n", mr);
        model_free(&m);
    }
    /* the training terms of docs/TRAINING.md, alone and together */
    check_variant(NMT_ARCH_RNNSEARCH, 0, 0, (net_reg){0.1, 0, 0, 0, 0, 0}, "label smoothing 0.1");
    check_variant(NMT_ARCH_FERTDEC, 0, 0.5, (net_reg){0.1, 0, 0, 0, 0, 0}, "label smoothing 0.1 and dropout 0.5");
    check_variant(NMT_ARCH_RNNSEARCH, 0, 0, (net_reg){0, 0.5, 0, 0, 0, 0}, "embedding dropout 0.5");
    check_variant(NMT_ARCH_RNNSEARCH, 0, 0, (net_reg){0, 0, 0.5, 0, 0, 0}, "recurrent dropout 0.5");
    check_variant(NMT_ARCH_RNNENC, 0, 0, (net_reg){0, 0.5, 0.5, 0, 0, 0}, "embedding and recurrent dropout 0.5");
    check_variant(NMT_ARCH_FERTDEC, 0, 0.5, (net_reg){0, 0.5, 0.5, 0, 0, 0}, "every dropout 0.5");
    sorted_batch = 1;
    check_variant(NMT_ARCH_RNNSEARCH, 0, 0, (net_reg){0, 0.5, 0.5, 0, 0, 0}, "every dropout 0.5 on a length-sorted batch");
    sorted_batch = 0;
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) check_variant(arch, 1, 0, (net_reg){0, 0, 0, 0, 0, 0}, "tied embeddings");
    check_variant(NMT_ARCH_RECATT_FERTDEC, 1, 0.5, (net_reg){0.1, 0.5, 0.5, 0, 0, 0}, "tied embeddings and every training term");
    /* FertDec's norms smoothed below FERT_EPS (decoder.c): widened past every norm of the test,
     * then to where some norms fall on each side, the quadratic inside is checked too */
    for (double eps = 100; eps >= 0.5; eps /= 200) {
        nmt_fert_eps = eps;
        char what[64];
        snprintf(what, sizeof what, "norms smoothed below %g", eps);
        check_variant(NMT_ARCH_FERTDEC, 0, 0, (net_reg){0, 0, 0, 0, 0, 0}, what);
        check_variant(NMT_ARCH_RECATT_FERTDEC, 0, 0, (net_reg){0, 0, 0, 0, 0, 0}, what);
    }
    nmt_fert_eps = 1e-12;
    test_variational(NMT_ARCH_RNNSEARCH);
    test_variational(NMT_ARCH_RNNENC);
    test_variational(NMT_ARCH_FERTDEC);
    for (int arch = 0; arch < NMT_ARCH_RNN_COUNT; arch++) {
        nmt_config c = nmt_config_default();
        c.arch = arch;
        if (!has_attention(&c)) continue; /* RNNencdec: refused by training (train/guided.c) */
        test_guided(arch, NMT_GUIDED_CE);
        test_guided(arch, NMT_GUIDED_MSE);
    }
    /* Each fault drops one backward term; the check must notice every one. */
    static const struct { int fault, arch; const char *what; net_reg reg; int tied, guided; } faults[] = {
        {FAULT_GRU_RESET_PATH, NMT_ARCH_RNNSEARCH, "GRU reset-gate path to h_prev", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_ATTN_SOFTMAX, NMT_ARCH_RNNSEARCH, "softmax Jacobian of the attention", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_DEC_CTX_GRU, NMT_ARCH_RNNSEARCH, "GRU's share of dc_i", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_OUT_BIAS, NMT_ARCH_RNNSEARCH, "maxout bias gradient", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_ENC_CARRY, NMT_ARCH_RNNENC, "gradient through padded encoder steps", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_RECATT_PREV, NMT_ARCH_RECATT, "RecAtt's gradient to the previous context", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_LOCFER_SUM, NMT_ARCH_LOCFER, "LocFer's gradient to all earlier attention weights", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_FERTDEC_LEFT, NMT_ARCH_FERTDEC, "FertDec's left-over cost gradient", {0, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_LABEL_SMOOTHING, NMT_ARCH_RNNSEARCH, "label smoothing's term in the softmax gradient", {0.1, 0, 0, 0, 0, 0}, 0, 0},
        {FAULT_DROP_EMB, NMT_ARCH_RNNSEARCH, "the dropout mask in the source embeddings' gradient", {0, 0.5, 0, 0, 0, 0}, 0, 0},
        {FAULT_DROP_RNN, NMT_ARCH_RNNSEARCH, "the dropout mask in the recurrent products' gradient", {0, 0, 0.5, 0, 0, 0}, 0, 0},
        {FAULT_TIED_OUT, NMT_ARCH_RNNSEARCH, "the softmax layer's share of the tied embeddings' gradient", {0, 0, 0, 0, 0, 0}, 1, 0},
        {FAULT_GUIDED, NMT_ARCH_RNNSEARCH, "guided alignment's gradient to the attention", {0, 0, 0, 0, 0, 0}, 0, 1},
        {FAULT_GUIDED, NMT_ARCH_LOCFER, "guided alignment's gradient beside LocFer's", {0, 0, 0, 0, 0, 0}, 0, 1},
    };
    quiet = 1;
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i++) {
        struct model_ctx m;
        guide_ws g;
        model_init_tied(&m, faults[i].arch, faults[i].tied);
        if (faults[i].guided) guided_on(&m, &g, NMT_GUIDED_CE);
        m.reg = faults[i].reg;
        nmt_fault = faults[i].fault;
        double mr = 0;
        int bad = check_model(&m, &mr);
        nmt_fault = 0;
        if (faults[i].guided) guide_free(&g);
        CHECKF(bad > 0, "dropping the %s went unnoticed", faults[i].what);
        printf("fault '%s': caught\n", faults[i].what);
        model_free(&m);
    }
    return test_done("test_gradcheck_f64");
}
