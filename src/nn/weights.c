/* weights.c: a model's weights converted once into int8 or bf16 (weights.h). The products a
 * decoder step makes by them (nn/step.c, gru.c, readout.c, decode/tf_infer.c through mmw) then
 * read the converted form; the encoder's and the initial state's stay FP32, as they always have. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/weights.h"

const char *bk_prec_name(int prec) { return prec == BK_PREC_INT8 ? "int8" : prec == BK_PREC_BF16 ? "bf16" : "fp32"; }

/* the weights a decoder step multiplies by besides W_o, by their fields in params */
static const size_t step_slots[] = {
    offsetof(params, dec_W),  offsetof(params, att_W),  offsetof(params, att_R),  offsetof(params, dec_C),
    offsetof(params, dec_F),  offsetof(params, fer_V),  offsetof(params, dec_U),  offsetof(params, dec_Uh),
    offsetof(params, fer_Wg), offsetof(params, fer_Vh), offsetof(params, fer_Ug), offsetof(params, fer_Cg),
    offsetof(params, fer_Vg), offsetof(params, out_U),  offsetof(params, out_V),  offsetof(params, out_C)};

static int refuse(const nmt_model *m, int prec, nmt_err *err)
{
    const backend_lowp_ops *lp = m->cx.b->lowp;
    if (!lp)
        return nmt_fail(err, NMT_ERR_ARG, "%s decoding: the %s backend has no %s matrix product (mm) for the "
                        "model's weights: use fp32", bk_prec_name(prec), m->cx.b->name, bk_prec_name(prec));
    if (!lp->supported(prec))
        return nmt_fail(err, NMT_ERR_ARG, "%s decoding needs %s, which this CPU (or build) lacks (the %s backend's %s "
                        "matrix product, mm): use fp32", bk_prec_name(prec), prec == BK_PREC_INT8 ? "AVX2" : "AVX512_BF16",
                        m->cx.b->name, bk_prec_name(prec));
    return NMT_OK;
}

static void lowp_free(const nmt_model *m, model_lowp *s)
{
    if (!s) return;
    const backend_lowp_ops *lp = m->cx.b->lowp;
    for (size_t i = 0; i < PARAMS_SLOTS; i++) lp->qmat_free((bk_qmat *)s->tw[i].q);
    lp->qmat_free((bk_qmat *)s->out.q);
    m->cx.b->free(s->Wt);
    free(s);
}

/* one weight [K, N] into its converted form */
static int convert(const nmt_model *m, bk_weight *w, int prec, const real *W, int K, int N, nmt_err *err)
{
    bk_qmat *q = NULL;
    int rc = m->cx.b->lowp->qmat_init(&q, prec, W, K, N, N, NULL, err);
    if (!rc) *w = (bk_weight){.data = W, .K = K, .N = N, .dtype = prec, .q = q};
    return rc;
}

/* W_o: out_W, or with tied embeddings Ey^T, gathered once into s->Wt */
static int convert_out(const nmt_model *m, model_lowp *s, nmt_err *err)
{
    const nmt_config *c = &m->cfg;
    int l = c->maxout, V = c->tgt_vocab;
    const real *W = m->p.out_W;
    if (c->tied_emb) {
        const backend_ops *b = m->cx.b;
        int *ids = malloc(sizeof(int) * V), *dids = b->alloc(sizeof(int) * V);
        s->Wt = b->alloc(sizeof(real) * l * V);
        int rc = ids && dids && s->Wt ? NMT_OK : nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        if (!rc) {
            for (int v = 0; v < V; v++) ids[v] = v;
            b->copy_in(dids, ids, sizeof(int) * V);
            b->gather_cols(s->Wt, m->p.Et, dids, V, l, l, 1);
        }
        free(ids);
        b->free(dids);
        if (rc) return rc;
        W = s->Wt;
    }
    return convert(m, &s->out, s->prec, W, l, V, err);
}

/* A Transformer's decoder weights a search step multiplies by (decode/tf_infer.c): every
 * layer's but the encoder-decoder keys and values, which are projected once per sentence from
 * the FP32 encoder. The slots, as offsets into params, into slots; how many. */
static size_t tf_step_slots(const nmt_config *c, size_t *slots)
{
    static const int k[] = {TF_SELF_WQKV, TF_SELF_WO, TF_CTX_WQ, TF_CTX_WO, TF_FFN_W1, TF_FFN_W2};
    size_t n = 0, nk = sizeof k / sizeof *k;
    for (int l = 0; l < c->dec_depth; l++)
        for (size_t j = 0; j < nk; j++)
            slots[n++] = tf_slot(TF_DEC, l, k[j]);
    return n;
}

/* the weight in slot converted into s->tw, s's widest product widened to it */
static int convert_slot(const nmt_model *m, model_lowp *s, size_t slot, nmt_err *err)
{
    const tensor_info *t = NULL;
    for (int i = 0; i < m->pt.n; i++)
        if (m->pt.t[i].slot == slot) t = &m->pt.t[i];
    if (!t) return NMT_OK; /* this variant has no such weight */
    if (t->rows > s->maxK) s->maxK = t->rows;
    if (t->cols > s->maxN) s->maxN = t->cols;
    return convert(m, &s->tw[slot / sizeof(real *)], s->prec, m->P + t->offset, t->rows, t->cols, err);
}

static int make(nmt_model *m, int prec, model_lowp **out, nmt_err *err)
{
    model_lowp *s = calloc(1, sizeof *s);
    if (!s) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    s->prec = prec;
    memcpy(s->tw, m->w, sizeof s->tw); /* FP32 where not converted below */
    int rc = convert_out(m, s, err);
    s->maxK = m->cfg.maxout;
    s->maxN = m->cfg.tgt_vocab;
    size_t tf[6 * TF_MAX_DEPTH], n = sizeof step_slots / sizeof *step_slots;
    const size_t *slots = step_slots;
    if (is_transformer(&m->cfg)) {
        n = tf_step_slots(&m->cfg, tf);
        slots = tf;
    }
    for (size_t k = 0; k < n && !rc; k++) rc = convert_slot(m, s, slots[k], err);
    if (rc) lowp_free(m, s);
    else *out = s;
    return rc;
}

int model_lowp_get(nmt_model *m, int prec, const model_lowp **out, nmt_err *err)
{
    NMT_ASSERT(prec == BK_PREC_INT8 || prec == BK_PREC_BF16);
    int rc = refuse(m, prec, err);
    if (rc) return rc;
    pthread_mutex_lock(&m->lowp_lock);
    if (!m->lowp[prec]) rc = make(m, prec, &m->lowp[prec], err);
    *out = m->lowp[prec];
    pthread_mutex_unlock(&m->lowp_lock);
    return rc;
}

void model_lowp_free(nmt_model *m)
{
    for (int i = 0; i < 3; i++) {
        lowp_free(m, m->lowp[i]);
        m->lowp[i] = NULL;
    }
}
