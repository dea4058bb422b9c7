/* average.c: checkpoint averaging (nmt_model_average): the element-wise mean of the parameters of
 * models that share one configuration and one pair of vocabularies, as Marian's and OpenNMT's
 * averaging scripts give, summed in double so that averaging copies of one model returns it. */
#include <stdlib.h>

#include "backend/backend.h"
#include "base/err.h"
#include "nn/model.h"

/* Why a and b cannot be averaged, or NULL when they can. */
static const char *mismatch(const nmt_model *a, const nmt_model *b)
{
    const nmt_config *x = &a->cfg, *y = &b->cfg;
    if (x->arch != y->arch) return "another architecture";
    if (x->src_vocab != y->src_vocab || x->tgt_vocab != y->tgt_vocab || x->emb != y->emb || x->hid != y->hid ||
        x->att != y->att || x->maxout != y->maxout || x->window != y->window)
        return "other sizes";
    if (x->fert_step_w != y->fert_step_w || x->fert_left_w != y->fert_left_w) return "other FertDec cost weights";
    if (x->tied_emb != y->tied_emb) return "tied embeddings in one, not in the other";
    if (a->pt.total != b->pt.total) return "another parameter layout";
    return NULL; /* the tokens are nmt_model_check_vocab's to compare */
}

int nmt_model_average(nmt_model **out, const char *const *paths, int n, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_model_average", out, paths);
    if (bad || (n > 0 && (bad = nmt_strs_null(err, "nmt_model_average", "paths", paths, n)))) return bad;
    *out = NULL;
    if (n < 1 || !paths) return nmt_fail(err, NMT_ERR_ARG, "nmt_model_average: no models");
    nmt_model *first = NULL;
    int rc = nmt_model_load(&first, paths[0], err);
    if (rc) return rc;
    size_t total = first->pt.total;
    double *sum = malloc(sizeof *sum * (total ? total : 1));
    if (!sum) { nmt_model_free(first); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory averaging %zu parameters", total); }
    real *h = params_to_host(first); /* each model's parameters in turn, on the host */
    if (!h) { free(sum); nmt_model_free(first); return nmt_fail(err, NMT_ERR_NOMEM, "out of memory averaging %zu parameters", total); }
    for (size_t k = 0; k < total; k++) sum[k] = h[k];
    for (int i = 1; i < n && !rc; i++) {
        nmt_model *m = NULL;
        if ((rc = nmt_model_load(&m, paths[i], err))) break;
        const char *why = mismatch(first, m);
        nmt_err verr;
        if (why) rc = nmt_fail(err, NMT_ERR_ARG, "%s and %s cannot be averaged: %s", paths[0], paths[i], why);
        /* the vocabularies id for id, and a subword model's SentencePiece models and text stages,
         * which the average takes from the first file */
        else if (nmt_model_check_vocab(first, paths[0], m, paths[i], &verr))
            rc = nmt_fail(err, NMT_ERR_ARG, "%s and %s cannot be averaged: %s", paths[0], paths[i], verr.msg);
        if (!rc) m->cx.b->copy_out(h, m->P, sizeof(real) * total);
        for (size_t k = 0; !rc && k < total; k++) sum[k] += h[k];
        nmt_model_free(m);
    }
    for (size_t k = 0; !rc && k < total; k++) h[k] = (real)(sum[k] / n);
    if (!rc) params_from_host(first, h);
    free(h);
    free(sum);
    if (rc) { nmt_model_free(first); return rc; }
    *out = first;
    return NMT_OK;
}
