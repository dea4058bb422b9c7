/* outlayer.c: the decoder's output layer in FP32, int8 or bf16, over the whole vocabulary or a
 * shortlist's columns (outlayer.h). With tied embeddings W_o = Ey^T: FP32 multiplies by Et
 * transposed, as training does; the lower precisions need W_o itself, so a transposed copy is
 * made once. A shortlist's columns are gathered per batch, not per step; in lower precision they
 * are converted then too (each column's int8 scale depends on that column alone, so a column is
 * quantised the same in every set). */
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/err.h"
#include "decode/outlayer.h"

/* dst [K, n] = the columns ids (device) of src [K, ld], on the device */
static void gather_cols(real *dst, const real *src, int ld, int K, const int *ids, int n)
{
    backend()->gather_cols(dst, src, ids, n, K, 1, ld);
}

/* dst [K, n] = rows ids (device) of src [., K] transposed, on the device */
static void gather_rows_t(real *dst, const real *src, int K, const int *ids, int n)
{
    backend()->gather_cols(dst, src, ids, n, K, K, 1);
}

/* The weights a decoder step multiplies by besides W_o (nn/step.c, gru.c, readout.c), with their
 * shapes [K, N]; a variant's absent ones are left out. Into w, their count returned. */
typedef struct wshape { const real *W; int K, N; } wshape;
static int step_weights(wshape *w, const nmt_config *c, const params *p)
{
    int n = c->hid, na = c->att, cd = ctx_dim(c), m = c->emb, l2 = 2 * c->maxout, k = 0;
    wshape all[] = {{p->dec_W, m, 3 * n}, {p->att_W, n, na}, {p->att_R, cd, na}, {p->dec_C, cd, 3 * n},
                    {p->dec_F, cd, 3 * n}, {p->fer_V, m, 3 * n}, {p->dec_U, n, 2 * n}, {p->dec_Uh, n, n},
                    {p->fer_Wg, m, m}, {p->fer_Vh, m, n}, {p->fer_Ug, n, m}, {p->fer_Cg, cd, m},
                    {p->fer_Vg, m, m}, {p->out_U, n, l2}, {p->out_V, m, l2}, {p->out_C, cd, l2}};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i].W) w[k++] = all[i];
    return k;
}

/* The step's weights converted into o->step. */
static int step_convert(out_layer *o, const nmt_model *m, nmt_err *err)
{
    wshape w[BK_QSET_MAX];
    int n = step_weights(w, &m->cfg, &m->p), rc = NMT_OK;
    NMT_ASSERT(n <= BK_QSET_MAX);
    for (int i = 0; i < n && !rc; i++) {
        o->step.W[i] = w[i].W;
        o->step.K[i] = w[i].K;
        o->step.N[i] = w[i].N;
        if (!(rc = backend_lowp()->qmat_init(&o->step.q[i], o->prec, w[i].W, w[i].K, w[i].N, w[i].N, NULL, err))) o->step.n++;
    }
    return rc;
}

/* the widest K and N of every product o serves */
static void widest(const out_layer *o, int *K, int *N)
{
    *K = o->l;
    *N = o->V;
    for (int i = 0; i < o->step.n; i++) {
        if (o->step.K[i] > *K) *K = o->step.K[i];
        if (o->step.N[i] > *N) *N = o->step.N[i];
    }
}

static const char *prec_name(int prec) { return prec == BK_PREC_INT8 ? "int8" : prec == BK_PREC_BF16 ? "bf16" : "fp32"; }

int out_init(out_layer *o, const nmt_model *m, int prec, int shortlist, nmt_err *err)
{
    const nmt_config *c = &m->cfg;
    const backend_lowp_ops *lp = backend_lowp();
    memset(o, 0, sizeof *o);
    if (prec != BK_PREC_F32 && !lp)
        return nmt_fail(err, NMT_ERR_ARG, "%s decoding: the %s backend has no %s products: use fp32", prec_name(prec),
                        backend()->name, prec_name(prec));
    if (prec != BK_PREC_F32 && !lp->supported(prec))
        return nmt_fail(err, NMT_ERR_ARG, "%s decoding needs %s, which this CPU (or build) lacks: use fp32", prec_name(prec),
                        prec == BK_PREC_INT8 ? "AVX2" : "AVX512_BF16");
    *o = (out_layer){.prec = prec, .l = c->maxout, .V = c->tgt_vocab, .tied = c->tied_emb, .Vs = c->tgt_vocab,
                     .sl = shortlist, .W = c->tied_emb ? m->p.Et : m->p.out_W, .bias = m->p.out_bias};
    size_t lv = (size_t)o->l * o->V;
    int rc = NMT_OK, lowtied = prec != BK_PREC_F32 && !shortlist && o->tied;
    const backend_ops *bk = backend();
    /* the columns' ids: a batch's shortlist, or every word once for W_o's transposed copy */
    if (!(o->hids = malloc(sizeof(int) * o->V)) || !(o->dids = bk->alloc(sizeof(int) * o->V)))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc && shortlist && (!(o->Ws = bk->alloc(sizeof(real) * lv)) || !(o->bs = bk->alloc(sizeof(real) * o->V))))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory for the shortlist's output layer");
    if (!rc && lowtied && !(o->Wt = bk->alloc(sizeof(real) * lv))) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc && prec != BK_PREC_F32 && !shortlist) {
        const real *W = o->W;
        if (o->tied) { /* W_o itself, once */
            for (int v = 0; v < o->V; v++) o->hids[v] = v;
            bk->copy_in(o->dids, o->hids, sizeof(int) * o->V);
            gather_rows_t(o->Wt, o->W, o->l, o->dids, o->V);
            W = o->Wt;
        }
        if (!rc) rc = lp->qmat_init(&o->q, prec, W, o->l, o->V, o->V, NULL, err);
    }
    if (!rc && prec != BK_PREC_F32) rc = step_convert(o, m, err);
    if (rc) out_free(o);
    return rc;
}

void out_free(out_layer *o)
{
    if (!o) return;
    const backend_lowp_ops *lp = backend_lowp();
    if (lp) { /* none was made without one */
        lp->qmat_free(o->q);
        lp->qmat_free(o->qs);
        lp->qws_free(o->qws);
        for (int i = 0; i < o->step.n; i++) lp->qmat_free(o->step.q[i]);
    }
    const backend_ops *bk = backend();
    bk->free(o->Wt);
    bk->free(o->Ws);
    bk->free(o->bs);
    bk->free(o->dids);
    free(o->hids);
    memset(o, 0, sizeof *o);
}

int out_reserve(out_layer *o, int H, nmt_err *err)
{
    if (o->prec == BK_PREC_F32 || H <= o->qrows) return NMT_OK;
    const backend_lowp_ops *lp = backend_lowp();
    lp->qws_free(o->qws);
    o->qws = NULL;
    o->qrows = 0;
    o->step.ws = NULL;
    int K, N, rc;
    widest(o, &K, &N);
    if (!(rc = lp->qws_init(&o->qws, H, K, N, err))) {
        o->qrows = H;
        o->step.ws = o->qws; /* one workspace for every product: they run one after another */
    }
    return rc;
}

int out_select(out_layer *o, const int *ids, int n, nmt_err *err)
{
    NMT_ASSERT(o->sl && n >= 1 && n <= o->V);
    o->Vs = n;
    const backend_ops *bk = backend();
    bk->copy_in(o->dids, ids, sizeof(int) * n); /* the batch's columns, once */
    bk->gather_rows(o->bs, o->bias, o->dids, n, 1);
    if (o->tied && o->prec == BK_PREC_F32) bk->gather_rows(o->Ws, o->W, o->dids, n, o->l);
    else if (o->tied) gather_rows_t(o->Ws, o->W, o->l, o->dids, n);
    else gather_cols(o->Ws, o->W, o->V, o->l, o->dids, n);
    if (o->prec == BK_PREC_F32) return NMT_OK;
    const backend_lowp_ops *lp = backend_lowp();
    lp->qmat_free(o->qs);
    o->qs = NULL;
    return lp->qmat_init(&o->qs, o->prec, o->Ws, o->l, n, n, NULL, err);
}

void out_logits(const out_layer *o, real *z, const real *t, int H)
{
    int l = o->l, n = o->Vs;
    const real *W = o->sl ? o->Ws : o->W;
    backend()->repeat_row(z, o->sl ? o->bs : o->bias, H, n);
    if (o->prec != BK_PREC_F32) backend_lowp()->qgemm(o->qws, H, t, l, o->sl ? o->qs : o->q, 1, z, n);
    else if (o->tied) mm(0, 1, H, n, l, t, l, W, l, 1, z, n);
    else mm(0, 0, H, n, l, t, l, W, n, 1, z, n);
}
