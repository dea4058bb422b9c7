/* test_tf_torch_f64.c: the Transformer's loss and gradients in float64, dumped for the PyTorch
 * implementation written apart from the C code (bench/torch_transformer.py), which
 * tests/cli/torch_transformer.sh runs on them. Alone it checks only that every dump is whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nn/net.h"
#include "test.h"

#define TX bk_ctx_default()

static rng R;

/* One configuration to compare: the family's switches that change an equation. */
typedef struct tcase {
    const char *name;
    int post, tied, max_pos, act, heads, enc_depth, dec_depth;
    double ls, ln_eps;
} tcase;

static const tcase cases[] = {
    {"pre_untied_sin_relu", 0, 0, 0, NMT_ACT_RELU, 2, 2, 2, 0, 1e-6},
    {"pre_tied_sin_gelu_ls", 0, 1, 0, NMT_ACT_GELU, 2, 2, 2, 0.1, 1e-6},
    {"pre_tiedall_learned_swish", 0, 2, 9, NMT_ACT_SWISH, 4, 1, 2, 0, 1e-6},
    {"post_untied_learned4_gelu_ls", 1, 0, 4, NMT_ACT_GELU, 2, 2, 1, 0.1, 1e-6},
    {"post_tied_sin_swish_ls", 1, 1, 0, NMT_ACT_SWISH, 1, 1, 2, 0.1, 1e-6},
    {"post_tiedall_sin_relu_ls", 1, 2, 0, NMT_ACT_RELU, 2, 2, 2, 0.1, 1e-6},
    {"pre_untied_learned3_relu_ls_eps", 0, 0, 3, NMT_ACT_RELU, 2, 3, 2, 0.1, 1e-2},
};

/* A variable-length batch: lengths with EOS (id 0) last, random words before it (UNK, id 1,
 * included), padding 0 as the data pipeline leaves it. */
static void make_batch(batch *bt, int Kx, int Ky)
{
    static const int xl[4] = {7, 3, 5, 1}, yl[4] = {4, 6, 1, 3};
    int B = 4, Tx = 7, Ty = 6;
    *bt = (batch){B, Tx, Ty, calloc((size_t)Tx * B, sizeof(int)), calloc((size_t)Ty * B, sizeof(int)), malloc(sizeof(int) * B),
                  malloc(sizeof(int) * B), NULL, NULL, NULL, NULL};
    for (int b = 0; b < B; b++) {
        bt->xlen[b] = xl[b];
        bt->ylen[b] = yl[b];
        for (int t = 0; t < xl[b]; t++) bt->x[t * B + b] = t == xl[b] - 1 ? 0 : 1 + (int)rng_below(&R, Kx - 1);
        for (int t = 0; t < yl[b]; t++) bt->y[t * B + b] = t == yl[b] - 1 ? 0 : 1 + (int)rng_below(&R, Ky - 1);
    }
}

static void write_ints(FILE *f, const char *key, const int *v, int n)
{
    fprintf(f, "\"%s\": [", key);
    for (int i = 0; i < n; i++) fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fprintf(f, "]");
}

/* Writes the case's parameters then its gradients (little-endian float64, the table's order) to
 * DIR/NAME.bin, and its description to DIR/NAME.json; the bytes written, or -1. */
static long dump(const char *dir, const tcase *k, const nmt_config *c, const param_table *pt, const real *P, const real *G,
                 const batch *bt, double loss)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, k->name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    /* real is double in this build (the _f64 library): the bytes are float64 as they are */
    size_t n = fwrite(P, sizeof(real), pt->total, f) + fwrite(G, sizeof(real), pt->total, f);
    if (fclose(f) || n != 2 * pt->total) return -1;
    snprintf(path, sizeof path, "%s/%s.json", dir, k->name);
    if (!(f = fopen(path, "w"))) return -1;
    static const char *const acts[3] = {"relu", "gelu", "swish"};
    fprintf(f, "{\"name\": \"%s\", \"config\": {\"src_vocab\": %d, \"tgt_vocab\": %d, \"emb\": %d, \"enc_depth\": %d, "
               "\"dec_depth\": %d, \"heads\": %d, \"ffn\": %d, \"ffn_activation\": \"%s\", \"norm\": \"%s\", "
               "\"max_positions\": %d, \"ln_eps\": %.17g, \"tied_emb\": %d},\n",
            k->name, c->src_vocab, c->tgt_vocab, c->emb, c->enc_depth, c->dec_depth, c->heads, c->ffn, acts[c->ffn_act],
            c->post_norm ? "post" : "pre", c->max_pos, c->ln_eps, c->tied_emb);
    fprintf(f, " \"label_smoothing\": %.17g, \"loss\": %.17g, \"total\": %zu,\n \"batch\": {\"B\": %d, \"Tx\": %d, \"Ty\": %d, ",
            k->ls, loss, pt->total, bt->B, bt->Tx, bt->Ty);
    write_ints(f, "x", bt->x, bt->Tx * bt->B);
    fprintf(f, ", ");
    write_ints(f, "y", bt->y, bt->Ty * bt->B);
    fprintf(f, ", ");
    write_ints(f, "xlen", bt->xlen, bt->B);
    fprintf(f, ", ");
    write_ints(f, "ylen", bt->ylen, bt->B);
    fprintf(f, "},\n \"tensors\": [");
    for (int i = 0; i < pt->n; i++)
        fprintf(f, "%s\n  {\"name\": \"%s\", \"rows\": %d, \"cols\": %d, \"offset\": %zu}", i ? "," : "", pt->t[i].name,
                pt->t[i].rows, pt->t[i].cols, pt->t[i].offset);
    fprintf(f, "]}\n");
    return fclose(f) ? -1 : (long)(2 * pt->total * sizeof(real));
}

static void run_case(const char *dir, const tcase *k)
{
    nmt_config c = nmt_config_transformer();
    c.src_vocab = k->tied == 2 ? 13 : 11;
    c.tgt_vocab = 13;
    c.emb = c.hid = c.att = c.maxout = 8;
    c.heads = k->heads;
    c.ffn = 12;
    c.enc_depth = k->enc_depth;
    c.dec_depth = k->dec_depth;
    c.post_norm = k->post;
    c.tied_emb = k->tied;
    c.max_pos = k->max_pos;
    c.ffn_act = k->act;
    c.ln_eps = k->ln_eps;
    CHECKF(nmt_config_check(&c, NULL) == 0, "%s: config refused", k->name);
    param_table pt;
    param_table_build(&pt, &c);
    real *P = malloc(sizeof(real) * pt.total), *G = calloc(pt.total, sizeof(real));
    /* every parameter random, the layer norms' scales about 1, so that no term hides behind a
     * zero bias or a unit scale */
    for (int i = 0; i < pt.n; i++) {
        const tensor_info *t = &pt.t[i];
        int scale = strstr(t->name, "ln_scale") != NULL;
        for (size_t j = 0; j < (size_t)t->rows * t->cols; j++)
            P[t->offset + j] = (real)((scale ? 1 : 0) + (scale ? 0.2 : 0.4) * rng_normal(&R));
    }
    params p, g;
    params_point(&p, &pt, P);
    params_point(&g, &pt, G);
    batch bt;
    make_batch(&bt, c.src_vocab, c.tgt_vocab);
    net_ws ws;
    memset(&ws, 0, sizeof ws);
    NMT_ASSERT(net_ws_reserve(TX, &ws, &c, bt.B, bt.Tx, bt.Ty, NULL) == 0);
    /* training mode (label smoothing only applies there), every dropout 0 */
    rng drop;
    rng_seed(&drop, 5);
    net_reg reg = {0};
    reg.label_smoothing = k->ls;
    net_set_dropout(&ws, 0, &drop);
    net_set_reg(&ws, &reg);
    double loss = net_forward(TX, &ws, &c, &p, &bt, NULL);
    net_backward(TX, &ws, &c, &p, &g, &bt, 1);
    CHECKF(isfinite(loss) && loss > 0, "%s: loss %g", k->name, loss);
    /* every tensor's gradient finite, and not all zero (each takes part in the loss) */
    for (int i = 0; i < pt.n; i++) {
        const tensor_info *t = &pt.t[i];
        double s = 0;
        int fin = 1;
        for (size_t j = 0; j < (size_t)t->rows * t->cols; j++) {
            fin &= isfinite(G[t->offset + j]) != 0;
            s += fabs(G[t->offset + j]);
        }
        CHECKF(fin && s > 0, "%s: %s's gradient is %s", k->name, t->name, fin ? "zero" : "not finite");
    }
    long bytes = dump(dir, k, &c, &pt, P, G, &bt, loss);
    CHECKF(bytes > 0, "%s: cannot write into %s: %s", k->name, dir, strerror(errno));
    printf("%s: %d tensors, %zu parameters, loss %.12g\n", k->name, pt.n, pt.total, loss);
    free(P); free(G);
    free(bt.x); free(bt.y); free(bt.xlen); free(bt.ylen);
    net_ws_free(&ws);
}

int main(void)
{
    rng_seed(&R, 20261202);
    const char *dir = getenv("NMT_TORCH_DUMP");
    char tmp[] = "/tmp/nmt-torch-dump.XXXXXX";
    if (!dir || !*dir) {
        /* alone: the dumps go to a directory of our own, removed after */
        dir = mkdtemp(tmp);
        NMT_ASSERT(dir != NULL);
        printf("NMT_TORCH_DUMP unset: dumps written to %s and removed (tests/cli/torch_transformer.sh compares them with PyTorch)\n", dir);
    }
    size_t n = sizeof cases / sizeof *cases;
    for (size_t i = 0; i < n; i++) run_case(dir, &cases[i]);
    if (dir == tmp) {
        char path[4096];
        for (size_t i = 0; i < n; i++) {
            snprintf(path, sizeof path, "%s/%s.bin", dir, cases[i].name);
            remove(path);
            snprintf(path, sizeof path, "%s/%s.json", dir, cases[i].name);
            remove(path);
        }
        CHECKF(rmdir(dir) == 0, "cannot remove %s: %s", dir, strerror(errno));
    }
    return test_done("test_tf_torch_f64");
}
