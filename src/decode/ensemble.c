/* ensemble.c: an ensemble's step (ensemble.h): every model advances its own part of each
 * hypothesis's state row, then the search reads score(v) = Σ_k w_k (z_k[v] - log Σ e^{z_k}),
 * the weighted mean of the models' log-probabilities, not renormalised (Marian's). And the check
 * that two models read and write the same tokens (nmt_model_check_vocab). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "data/vocab.h"
#include "decode/ensemble.h"
#include "decode/outlayer.h"
#include "decode/shortlist.h"
#include "data/pipeline.h"
#include "data/subword.h"

/* ------------------------------------------------------------------ the models */

int ens_init(infer_ens *e, const nmt_model *const *m, const double *weights, int n, nmt_err *err)
{
    memset(e, 0, sizeof *e);
    if (n < 1 || !m) return nmt_fail(err, NMT_ERR_ARG, "an ensemble needs at least one model");
    double sum = 0;
    for (int k = 0; weights && k < n; k++) {
        if (!(weights[k] > 0 && isfinite(weights[k])))
            return nmt_fail(err, NMT_ERR_ARG, "weight %d (%g) of the ensemble is not a positive number", k + 1, weights[k]);
        sum += weights[k];
    }
    if (!isfinite(sum)) /* each weight would become 0 */
        return nmt_fail(err, NMT_ERR_ARG, "the ensemble's weights sum to %g, not a finite number: scale them down", sum);
    e->m = calloc(n, sizeof *e->m); /* zeroed: ens_free on the failure below reads e->m[0] */
    e->wt = malloc(sizeof *e->wt * n);
    e->w = calloc(n, sizeof *e->w);
    e->n = n;
    e->owned = 1;
    if (!e->m || !e->wt || !e->w) {
        ens_free(e);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    e->V = m[0]->cfg.tgt_vocab;
    for (int k = 0; k < n; k++) {
        if (m[k]->cx.b != m[0]->cx.b || m[k]->cx.device != m[0]->cx.device) {
            ens_free(e);
            return nmt_fail(err, NMT_ERR_ARG, "model %d of the ensemble lives on device '%s' and model 1 on '%s': an "
                            "ensemble's models share one device", k + 1, m[k]->cx.b->name, m[0]->cx.b->name);
        }
        e->m[k] = m[k];
        e->wt[k] = (real)(weights ? weights[k] / sum : 1.0 / n);
        e->n_att += has_attention(&m[k]->cfg);
    }
    return NMT_OK;
}

infer_ens ens_one(const nmt_model **m, infer_ws *w)
{
    return (infer_ens){.n = 1, .m = m, .w = w, .n_att = has_attention(&m[0]->cfg), .V = m[0]->cfg.tgt_vocab};
}

static void output_free(infer_ens *e)
{
    for (int k = 0; e->out && k < e->n; k++) {
        out_free(&e->out[k]);
        e->w[k].out = NULL;
    }
    free(e->out);
    free(e->ids);
    free(e->mark);
    e->out = NULL;
    e->ids = NULL;
    e->mark = NULL;
    e->sl = NULL;
    e->V = e->m[0] ? e->m[0]->cfg.tgt_vocab : 0;
    e->vocab = NULL;
}

int ens_output(infer_ens *e, int prec, const nmt_shortlist *sl, nmt_err *err)
{
    output_free(e);
    if (prec == BK_PREC_F32 && !sl) return NMT_OK;
    int V = e->m[0]->cfg.tgt_vocab, rc = NMT_OK;
    e->out = calloc(e->n, sizeof *e->out);
    if (sl) {
        e->ids = malloc(sizeof(int) * V);
        e->mark = malloc(V);
    }
    if (!e->out || (sl && (!e->ids || !e->mark))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc && sl && (sl->nsrc != e->m[0]->cfg.src_vocab || sl->ntgt != V))
        rc = nmt_fail(err, NMT_ERR_ARG, "the shortlist was loaded for other vocabularies (%d source, %d target words; "
                      "the model has %d and %d)", sl->nsrc, sl->ntgt, e->m[0]->cfg.src_vocab, V);
    for (int k = 0; k < e->n && !rc; k++)
        if (!variant_of(&e->m[k]->cfg)->typed_out)
            rc = nmt_fail(err, NMT_ERR_ARG, "%s: not yet for a %s model: translate it in fp32 over the whole vocabulary",
                          sl ? "a lexical shortlist" : prec == BK_PREC_INT8 ? "int8 decoding" : "bf16 decoding",
                          nmt_arch_name(e->m[k]->cfg.arch));
        else if (!(rc = out_init(&e->out[k], e->m[k], prec, sl != NULL, err))) e->w[k].out = &e->out[k];
    if (rc) output_free(e);
    else e->sl = sl;
    return rc;
}

int ens_select(infer_ens *e, const batch *src, const int *extra, int nextra, nmt_err *err)
{
    if (!e->sl) return NMT_OK;
    int n = shortlist_select(e->sl, src, extra, nextra, e->ids, e->mark), rc = NMT_OK;
    for (int k = 0; k < e->n && !rc; k++) rc = out_select(&e->out[k], e->ids, n, err);
    e->V = n;
    e->vocab = e->ids;
    return rc;
}

void ens_free(infer_ens *e)
{
    if (!e) return;
    if (e->m) output_free(e);
    if (!e->owned) return;
    for (int k = 0; e->w && k < e->n; k++) infer_free(&e->w[k]);
    ws_block_free(&e->blk);
    free(e->m);
    free(e->wt);
    free(e->w);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------------------ decoding */

int ens_state_dim(const infer_ens *e, int Tx)
{
    int d = 0;
    for (int k = 0; k < e->n; k++) d += infer_state_dim(&e->m[k]->cfg, Tx);
    return d;
}

static void layout(void *ws, arena *ap, const nmt_config *c, const int *d)
{
    infer_ens *e = ws;
    int Tx = d[1], H = d[2];
    e->z = arena_take(ap, sizeof(real) * H * c->tgt_vocab);
    e->alpha = arena_take(ap, sizeof(real) * H * Tx);
    e->ascale = arena_take(ap, sizeof(real) * H);
    e->hascale = arena_take_host(ap, sizeof(real) * H);
}

int ens_reserve(infer_ens *e, int S, int Tx, int H, int Ty, nmt_err *err)
{
    int rc = NMT_OK, want[3] = {1, Tx, H};
    for (int k = 0; k < e->n && !rc; k++) rc = infer_reserve(&e->m[k]->cx, &e->w[k], &e->m[k]->cfg, S, Tx, H, Ty, err);
    for (int k = 0; e->out && k < e->n && !rc; k++) rc = out_reserve(&e->out[k], H, err);
    if (rc || e->n == 1) return rc;
    if ((rc = ws_reserve(&e->m[0]->cx, &e->blk, want, layout, e, &e->m[0]->cfg, "ensemble decoding", err))) return rc;
    for (int r = 0; r < H; r++) e->hascale[r] = (real)(1.0 / (e->n_att ? e->n_att : 1));
    e->m[0]->cx.b->copy_in(e->ascale, e->hascale, sizeof(real) * H);
    return NMT_OK;
}

void ens_rows(infer_ens *e, int on)
{
    for (int k = 0; k < e->n; k++) e->w[k].blas = !on;
}

void ens_reorder(const infer_ens *e, const int *parent, int n)
{
    for (int k = 0; k < e->n; k++) infer_reorder(&e->w[k], e->m[k], parent, n);
}

void ens_encode(infer_ens *e, const batch *src)
{
    for (int k = 0; k < e->n; k++) infer_encode(&e->w[k], e->m[k], src);
}

void ens_init_states(infer_ens *e, real *state, int S, int Tx)
{
    int ld = ens_state_dim(e, Tx);
    for (int k = 0, off = 0; k < e->n; off += infer_state_dim(&e->m[k]->cfg, Tx), k++)
        infer_init_states(&e->m[k]->cx, &e->w[k], &e->m[k]->cfg, state + off, ld, S, Tx);
}

/* The attention an ensemble reports: the mean of the rows of its models that have attention
 * (RNNencdec has none), added in model order; a single such model's rows as they are; with none,
 * the first model's rows of zeros. */
static void mean_attention(infer_ens *e, int H, int Tx)
{
    const backend_ops *bk = e->m[0]->cx.b;
    e->att = NULL;
    if (e->n_att == 0) {
        e->att = e->w[0].alpha;
        return;
    }
    for (int k = 0; k < e->n; k++) {
        if (!has_attention(&e->m[k]->cfg)) continue;
        if (e->n_att == 1) {
            e->att = e->w[k].alpha;
            return;
        }
        if (!e->att) bk->zero_rows(e->alpha, Tx, H, Tx);
        bk->axpy_diff_rows(e->alpha, Tx, e->ascale, e->w[k].alpha, Tx, NULL, 0, H, Tx);
        e->att = e->alpha;
    }
}

void ens_step(infer_ens *e, const batch *src, int H, const int *src_of, const int *yprev, const real *st_prev,
              real *st_new)
{
    int Tx = src->Tx, ld = ens_state_dim(e, Tx), V = e->V;
    for (int k = 0, off = 0; k < e->n; off += infer_state_dim(&e->m[k]->cfg, Tx), k++) {
        infer_step(&e->w[k], e->m[k], src, H, src_of, yprev, st_prev + off, st_new + off, ld);
        if (e->n > 1) e->m[0]->cx.b->logp_acc_rows(e->z, e->w[k].logits, H, V, e->wt[k], k == 0);
    }
    e->scores = e->n == 1 ? e->w[0].logits : e->z;
    e->logp = e->n > 1;
    mean_attention(e, H, Tx);
}

/* ------------------------------------------------------------------ same tokens */

/* 0 when vocabularies x (of model na) and y (of nb) are one list, else NMT_ERR_ARG saying where
 * they part. */
static int same_words(const vocab *x, const vocab *y, const char *side, const char *unit, const char *na,
                      const char *nb, nmt_err *err)
{
    if (x->n != y->n) return nmt_fail(err, NMT_ERR_ARG, "%s has %d %s %s, %s %d", nb, y->n, side, unit, na, x->n);
    for (int i = 0; i < x->n; i++)
        if (strcmp(x->words[i], y->words[i]))
            return nmt_fail(err, NMT_ERR_ARG, "%s: %s vocabulary differs from %s's at id %d ('%s', %s has '%s')", nb, side,
                            na, i, y->words[i], na, x->words[i]);
    return NMT_OK;
}

/* A subword model's SentencePiece models and text stages, side by side. */
static int same_subwords(const subwords *x, const subwords *y, const char *na, const char *nb, nmt_err *err)
{
    static const char *const side[2] = {"source", "target"};
    if (!x != !y)
        return nmt_fail(err, NMT_ERR_ARG, "%s is a %s model and %s a %s model", nb, y ? "subword" : "word", na,
                        x ? "subword" : "word");
    if (!x) return NMT_OK;
    if (x->joint != y->joint)
        return nmt_fail(err, NMT_ERR_ARG, "%s has %s SentencePiece model and %s %s", nb, y->joint ? "one joint" : "a per-side",
                        na, x->joint ? "one joint" : "one per side");
    for (int s = 0; s < 2; s++) {
        size_t lx, ly;
        const void *bx = spm_bytes(x->sp[s], &lx), *by = spm_bytes(y->sp[s], &ly);
        if (lx != ly || memcmp(bx, by, lx))
            return nmt_fail(err, NMT_ERR_ARG, "%s: the %s side's SentencePiece model differs from %s's", nb, side[s], na);
        if (!text_stages_same(&x->text[s], &y->text[s]))
            return nmt_fail(err, NMT_ERR_ARG, "%s: the %s side's text stages differ from %s's", nb, side[s], na);
    }
    return NMT_OK;
}

/* Two word models: both of text tokenized outside, or both trained on raw text through the same
 * stages (which each would apply, and an average would keep only the first's of). */
static int same_word_stages(const nmt_model *a, const nmt_model *b, const char *na, const char *nb, nmt_err *err)
{
    static const char *const side[2] = {"source", "target"};
    if (a->sw) return NMT_OK;
    if (a->has_text != b->has_text)
        return nmt_fail(err, NMT_ERR_ARG, "%s was trained on %s text and %s on %s text: give them the same text", nb,
                        b->has_text ? "raw" : "tokenized", na, a->has_text ? "raw" : "tokenized");
    for (int s = 0; s < 2 && a->has_text; s++)
        if (!text_stages_same(&a->text[s], &b->text[s]))
            return nmt_fail(err, NMT_ERR_ARG, "%s: the %s side's text stages differ from %s's", nb, side[s], na);
    return NMT_OK;
}

int nmt_model_check_vocab(const nmt_model *a, const char *name_a, const nmt_model *b, const char *name_b, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_model_check_vocab", a, b);
    if (bad) return bad;
    const char *na = name_a ? name_a : "model 1", *nb = name_b ? name_b : "model 2";
    const char *unit = a->sw ? "pieces" : "words";
    int rc = same_subwords(a->sw, b->sw, na, nb, err);
    if (!rc) rc = same_word_stages(a, b, na, nb, err);
    if (!rc) rc = same_words(a->src, b->src, "source", unit, na, nb, err);
    if (!rc) rc = same_words(a->tgt, b->tgt, "target", unit, na, nb, err);
    return rc;
}
