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
static void gather_cols(const out_layer *o, real *dst, const real *src, int ld, int K, const int *ids, int n)
{
    o->cx->b->gather_cols(dst, src, ids, n, K, 1, ld);
}

/* dst [K, n] = rows ids (device) of src [., K] transposed, on the device */
static void gather_rows_t(const out_layer *o, real *dst, const real *src, int K, const int *ids, int n)
{
    o->cx->b->gather_cols(dst, src, ids, n, K, K, 1);
}

/* the widest K and N of every product o serves */
static void widest(const out_layer *o, int *K, int *N)
{
    *K = o->lw->maxK > o->l ? o->lw->maxK : o->l;
    *N = o->lw->maxN > o->V ? o->lw->maxN : o->V;
}

int out_init(out_layer *o, const nmt_model *m, int prec, int shortlist, nmt_err *err)
{
    const nmt_config *c = &m->cfg;
    memset(o, 0, sizeof *o);
    *o = (out_layer){.prec = prec, .cx = &m->cx, .l = c->maxout, .V = c->tgt_vocab, .tied = c->tied_emb,
                     .Vs = c->tgt_vocab, .sl = shortlist, .W = c->tied_emb ? m->p.Et : m->p.out_W,
                     .bias = m->p.out_bias};
    /* the model's cache of converted weights is its own business: made once, under its lock */
    int rc = prec != BK_PREC_F32 ? model_lowp_get((nmt_model *)m, prec, &o->lw, err) : NMT_OK;
    const backend_ops *bk = m->cx.b;
    size_t lv = (size_t)o->l * o->V;
    /* the columns' ids: a batch's shortlist */
    if (!rc && (!(o->hids = malloc(sizeof(int) * o->V)) || !(o->dids = bk->alloc(sizeof(int) * o->V))))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc && shortlist && (!(o->Ws = bk->alloc(sizeof(real) * lv)) || !(o->bs = bk->alloc(sizeof(real) * o->V))))
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory for the shortlist's output layer");
    if (rc) out_free(o);
    return rc;
}

void out_free(out_layer *o)
{
    if (!o || !o->cx) return;
    const backend_ops *bk = o->cx->b;
    if (o->lw) { /* none was made without one */
        bk->lowp->qmat_free(o->qs);
        bk->lowp->qws_free(o->qws);
    }
    bk->free(o->Ws);
    bk->free(o->bs);
    bk->free(o->dids);
    free(o->hids);
    memset(o, 0, sizeof *o);
}

int out_reserve(out_layer *o, int H, nmt_err *err)
{
    if (o->prec == BK_PREC_F32 || H <= o->qrows) return NMT_OK;
    const backend_lowp_ops *lp = o->cx->b->lowp;
    lp->qws_free(o->qws);
    o->qws = NULL;
    o->qrows = 0;
    int K, N, rc;
    widest(o, &K, &N);
    if (!(rc = lp->qws_init(&o->qws, H, K, N, err))) o->qrows = H; /* one for every product: they run in turn */
    return rc;
}

int out_select(out_layer *o, const int *ids, int n, nmt_err *err)
{
    NMT_ASSERT(o->sl && n >= 1 && n <= o->V);
    o->Vs = n;
    const backend_ops *bk = o->cx->b;
    bk->copy_in(o->dids, ids, sizeof(int) * n); /* the batch's columns, once */
    bk->gather_rows(o->bs, o->bias, o->dids, n, 1);
    if (o->tied && o->prec == BK_PREC_F32) bk->gather_rows(o->Ws, o->W, o->dids, n, o->l);
    else if (o->tied) gather_rows_t(o, o->Ws, o->W, o->l, o->dids, n);
    else gather_cols(o, o->Ws, o->W, o->V, o->l, o->dids, n);
    if (o->prec == BK_PREC_F32) return NMT_OK;
    const backend_lowp_ops *lp = bk->lowp;
    lp->qmat_free(o->qs);
    o->qs = NULL;
    return lp->qmat_init(&o->qs, o->prec, o->Ws, o->l, n, n, NULL, err);
}

void out_logits(const bk_ctx *x, const out_layer *o, real *z, const real *t, int H)
{
    int l = o->l, n = o->Vs;
    const real *W = o->sl ? o->Ws : o->W;
    x->b->repeat_row(z, o->sl ? o->bs : o->bias, H, n);
    if (o->prec != BK_PREC_F32) x->b->lowp->qgemm(o->qws, H, t, l, o->sl ? o->qs : o->lw->out.q, 1, z, n);
    else if (o->tied) mm(x, 0, 1, H, n, l, t, l, W, l, 1, z, n);
    else mm(x, 0, 0, H, n, l, t, l, W, n, 1, z, n);
}
