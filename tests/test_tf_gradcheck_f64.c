/* test_tf_gradcheck_f64.c: the Transformer's backward pass against central finite differences
 * in float64, for every parameter tensor: pre- and post-norm, embeddings untied, tied to the
 * output layer or tied all, sinusoidal and learned positions, relu, gelu and swish, an SSRU
 * decoder (Marian's), with label smoothing and every dropout on, guided alignment's ce and mse
 * costs on one head of one layer; then faults that drop one backward term each, every one
 * caught. */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "base/fault.h"
#include "nn/net.h"
#include "fdcheck.h"
#include "test.h"

#define TX bk_ctx_default()

static rng R;
static int quiet;

typedef struct tfm {
    nmt_config c;
    net_reg reg;
    rng drop;
    param_table pt;
    real *P, *G;
    params p, g;
    batch bt;
    net_ws ws;
    guide_ws *guide;    /* guided alignment on links (check_guided), or NULL */
    batch_links links;
} tfm;

static double loss(void *ctx)
{
    tfm *m = ctx;
    int train = m->reg.label_smoothing > 0 || m->reg.dropout_tf > 0 || m->reg.dropout_attn > 0 || m->reg.dropout_ffn > 0 ||
                m->guide;
    rng_seed(&m->drop, 77); /* the same masks at every evaluation */
    net_set_dropout(&m->ws, 0, train ? &m->drop : NULL);
    net_set_reg(&m->ws, &m->reg);
    net_set_guide(&m->ws, m->guide);
    net_set_links(&m->ws, m->guide ? &m->links : NULL);
    double nll = net_forward(TX, &m->ws, &m->c, &m->p, &m->bt, NULL);
    return (nll + net_guided_cost(&m->ws)) / m->bt.B;
}

/* lengths with EOS; ids random words, EOS last; padding holds 0 */
static void make_batch(batch *bt, int Kx, int Ky)
{
    static const int xl[3] = {4, 2, 5}, yl[3] = {3, 5, 1};
    int B = 3;
    *bt = (batch){B, 5, 5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    bt->x = calloc(25, sizeof(int));
    bt->y = calloc(25, sizeof(int));
    bt->xlen = malloc(sizeof(int) * B);
    bt->ylen = malloc(sizeof(int) * B);
    for (int b = 0; b < B; b++) {
        bt->xlen[b] = xl[b];
        bt->ylen[b] = yl[b];
        for (int t = 0; t < xl[b]; t++) bt->x[t * B + b] = t == xl[b] - 1 ? 0 : 1 + (int)rng_below(&R, Kx - 1);
        for (int t = 0; t < yl[b]; t++) bt->y[t * B + b] = t == yl[b] - 1 ? 0 : 1 + (int)rng_below(&R, Ky - 1);
    }
}

static nmt_config small(int post, int tied, int max_pos, int act)
{
    nmt_config c = nmt_config_transformer();
    c.src_vocab = tied == 2 ? 9 : 7;
    c.tgt_vocab = 9;
    c.emb = c.hid = c.att = c.maxout = 8;
    c.heads = 2;
    c.ffn = 6;
    c.enc_depth = c.dec_depth = 2;
    c.post_norm = post;
    c.tied_emb = tied;
    c.max_pos = max_pos;
    c.ffn_act = act;
    return c;
}

static void init(tfm *m, nmt_config c)
{
    memset(m, 0, sizeof *m);
    m->c = c;
    NMT_ASSERT(nmt_config_check(&c, NULL) == 0);
    param_table_build(&m->pt, &c);
    m->P = malloc(sizeof(real) * m->pt.total);
    m->G = malloc(sizeof(real) * m->pt.total);
    for (size_t i = 0; i < m->pt.total; i++) m->P[i] = (real)(0.4 * rng_normal(&R));
    params_point(&m->p, &m->pt, m->P);
    params_point(&m->g, &m->pt, m->G);
    make_batch(&m->bt, c.src_vocab, c.tgt_vocab);
    NMT_ASSERT(net_ws_reserve(TX, &m->ws, &c, 3, 5, 5, NULL) == 0);
}

static void done(tfm *m)
{
    free(m->P); free(m->G);
    free(m->bt.x); free(m->bt.y); free(m->bt.xlen); free(m->bt.ylen);
    net_ws_free(&m->ws);
}

/* mismatching elements over every tensor; *maxrel the largest relative error */
static int check(tfm *m, const char *what, double *maxrel)
{
    memset(m->G, 0, sizeof(real) * m->pt.total);
    loss(m);
    net_backward(TX, &m->ws, &m->c, &m->p, &m->g, &m->bt, (real)1 / m->bt.B);
    int bad = 0;
    for (int i = 0; i < m->pt.n; i++) {
        const tensor_info *t = &m->pt.t[i];
        double mr = 0;
        int b = fd_compare(t->name, m->P + t->offset, (size_t)t->rows * t->cols, m->G + t->offset, loss, m, &mr, quiet);
        if (!quiet) CHECKF(b == 0, "%s: %s: %d elements off", what, t->name, b);
        if (mr > *maxrel) *maxrel = mr;
        bad += b;
        if (quiet && bad) break; /* a fault's self-test needs one mismatch, not all */
    }
    return bad;
}

static void check_one(nmt_config c, net_reg reg, const char *what)
{
    tfm m;
    init(&m, c);
    m.reg = reg;
    double mr = 0;
    check(&m, what, &mr);
    printf("transformer, %s: %d tensors, largest relative gradient error %.2e\n", what, m.pt.n, mr);
    done(&m);
}

/* Guided alignment's links on make_batch's batch (lengths with EOS: source 4, 2, 5; target 3, 5,
 * 1): row 0's first target word linked to source words 0 and 2 (a = 1/2 each), its second to
 * word 1; row 1's target words 0 and 2 to its source word 0; row 2 none. Sorted by target, then
 * source, as links_attach leaves them; pairs (source, target). */
static int guided_off[4] = {0, 3, 5, 5};
static int guided_lk[10] = {0, 0, 2, 0, 1, 1, 0, 0, 0, 2};

static void guided_on(tfm *m, guide_ws *g, int kind)
{
    NMT_ASSERT(!guide_init(TX, g, kind, 0.7, m->bt.B, m->bt.Tx, m->bt.Ty, NULL));
    m->links = (batch_links){guided_off, guided_lk};
    m->guide = g;
}

/* The guided cost (weight 0.7) on head align_head - 1 of layer align_layer (0, 0: the last
 * layer's head 0), ce or mse, under reg's terms. */
static void check_guided(nmt_config c, net_reg reg, int kind, const char *what)
{
    tfm m;
    guide_ws g;
    init(&m, c);
    m.reg = reg;
    guided_on(&m, &g, kind);
    double mr = 0;
    check(&m, what, &mr);
    CHECKF(m.ws.guide->active && m.ws.guide->cost > 0, "%s: guided alignment's cost was not formed", what);
    printf("transformer, %s: largest relative gradient error %.2e (guided cost %.4g)\n", what, mr, m.ws.guide->cost);
    guide_free(&g);
    done(&m);
}

/* dropout changes the loss (so the masks were applied), and the same seed gives the same loss */
static void test_dropout_applied(void)
{
    tfm m;
    init(&m, small(0, 1, 0, NMT_ACT_RELU));
    double plain = loss(&m);
    m.reg = (net_reg){0, 0, 0, 0.3, 0.3, 0.3};
    double a = loss(&m), b = loss(&m);
    CHECKF(a == b, "the same seed drew other masks: %.15g, %.15g", a, b);
    CHECKF(fabs(a - plain) > 1e-6, "dropout changed nothing (%.15g)", a);
    done(&m);
}

/* --quick (the sanitizer builds): three variants and three faults, which between them still reach
 * every kind of tensor and both norm placements */
int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "--quick");
    rng_seed(&R, 20261202);
    static const char *const act[3] = {"relu", "gelu", "swish"};
    net_reg none = {0}, all = {0.1, 0, 0, 0.3, 0.2, 0.25};
    char what[160];
    for (int post = 0; post < 2 && !quick; post++)
        for (int tied = 0; tied < 3; tied++) {
            snprintf(what, sizeof what, "%s-norm, tied %s", post ? "post" : "pre", tied == 2 ? "all" : tied ? "decoder" : "none");
            check_one(small(post, tied, 0, NMT_ACT_RELU), none, what);
        }
    for (int a = 0; a < (quick ? 1 : 3); a++) {
        snprintf(what, sizeof what, "pre-norm, learned positions, %s", act[a]);
        check_one(small(0, 1, 6, a), none, what);
    }
    check_one(small(0, 0, 0, NMT_ACT_GELU), all, "pre-norm, label smoothing 0.1, dropout 0.3 / 0.2 / 0.25");
    check_one(small(1, 2, 4, NMT_ACT_SWISH), all, "post-norm, tied all, 4 learned positions (clamped), every term");
    /* Marian's SSRU decoder in place of self-attention (converted models' fine-tuning) */
    for (int post = 0; post < 2; post++) {
        nmt_config sc = small(post, 2 - post, 0, NMT_ACT_RELU);
        sc.ssru = 1;
        check_one(sc, post ? all : none, post ? "post-norm SSRU decoder, tied all, every term" : "pre-norm SSRU decoder");
    }
    /* guided alignment: the default head (the last layer's head 0), and head 1 of layer 1 under
     * attention dropout (the cost reads the weights before their dropout) */
    check_guided(small(0, 1, 0, NMT_ACT_RELU), none, NMT_GUIDED_CE, "pre-norm, guided alignment ce on layer 2 head 0");
    nmt_config gc = small(1, 0, 0, NMT_ACT_GELU);
    gc.align_layer = 1, gc.align_head = 2;
    check_guided(gc, all, NMT_GUIDED_MSE, "post-norm, guided alignment mse on layer 1 head 1, every term");
    test_dropout_applied();
    static const struct { int fault, post, pos; const char *what; } faults[] = {
        {FAULT_TF_RESIDUAL, 0, 0, "a pre-norm block's residual path"},
        {FAULT_TF_KEYS, 0, 0, "attention's gradient to its keys"},
        {FAULT_TF_CROSS, 0, 0, "encoder-decoder attention's gradient to the encoder"},
        {FAULT_TF_NORM, 1, 0, "a post-norm block's norm"},
        {FAULT_TF_POS, 0, 6, "learned positions' gradient"},
        {FAULT_TF_FFN, 1, 0, "the feed-forward's inner bias"},
        {FAULT_LABEL_SMOOTHING, 0, 0, "label smoothing's term"},
        {FAULT_TF_SSRU, 1, 0, "an SSRU cell's gradient to the previous cell"},
        {FAULT_TF_GUIDED, 0, 0, "guided alignment's gradient to its head"},
    };
    quiet = 1;
    for (size_t i = 0; i < sizeof faults / sizeof *faults; i += quick ? 3 : 1) {
        tfm m;
        nmt_config fc = small(faults[i].post, 1, faults[i].pos, NMT_ACT_RELU);
        fc.ssru = faults[i].fault == FAULT_TF_SSRU;
        init(&m, fc);
        guide_ws g;
        if (faults[i].fault == FAULT_TF_GUIDED) guided_on(&m, &g, NMT_GUIDED_CE);
        if (faults[i].fault == FAULT_LABEL_SMOOTHING) m.reg.label_smoothing = 0.1;
        nmt_fault = faults[i].fault;
        double mr = 0;
        int bad = check(&m, faults[i].what, &mr);
        nmt_fault = 0;
        CHECKF(bad > 0, "dropping %s went unnoticed", faults[i].what);
        printf("fault '%s': caught\n", faults[i].what);
        if (m.guide) guide_free(&g);
        done(&m);
    }
    return test_done("test_tf_gradcheck_f64");
}
