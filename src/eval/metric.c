/* metric.c: the corpus scores a training run validates by (nmt_metric_score): BLEU and chrF of
 * whole dev sets, through the sacreBLEU-exact scorers of bleu.c and chrf.c, behind the scorer
 * type the core calls back, so that the core itself never links the metrics (their names are
 * the core's: src/train/valid_metric.c). */
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "base/err.h"

/* Segment i's references across the n_refs sets, into row (n_refs pointers), NULL entries left
 * out (a segment with fewer references), as sacreBLEU drops a None reference; *k how many are
 * left. NMT_ERR_ARG when none is: sacreBLEU refuses a segment without a reference too. */
static int refs_of(const char **row, int *k, const char *const *const *refs, int n_refs, int i, const char *fn,
                   nmt_err *err)
{
    *k = 0;
    for (int r = 0; r < n_refs; r++)
        if (refs[r][i]) row[(*k)++] = refs[r][i];
    if (*k) return NMT_OK;
    return nmt_fail(err, NMT_ERR_ARG, "%s: segment %d has no reference (refs[r][%d] is NULL in every set)", fn, i, i);
}

/* The common checks of the corpus scorers; a row of n_refs pointers in *row (to free). */
static int corpus_args(const char ***row, const char *const *hyps, const char *const *const *refs, int n_refs, int n,
                       const void *out, const char *fn, nmt_err *err)
{
    *row = NULL;
    if (n < 0 || n_refs < 1) return nmt_fail(err, NMT_ERR_ARG, "%d segments and %d reference sets to score", n, n_refs);
    if ((n && !hyps) || !refs) return nmt_fail(err, NMT_ERR_ARG, "no hypotheses or references");
    int bad = NMT_ARGS(err, fn, out);
    if (bad || (bad = nmt_strs_null(err, fn, "hyps", hyps, n))) return bad;
    for (int r = 0; r < n_refs; r++) /* a set may miss segments (NULL), but not be missing */
        if (!refs[r]) return nmt_fail(err, NMT_ERR_ARG, "%s: refs[%d] is NULL", fn, r);
    if (!(*row = malloc(sizeof **row * (size_t)n_refs))) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    return NMT_OK;
}

int nmt_bleu_corpus(const char *const *hyps, const char *const *const *refs, int n_refs, int n, const char *tokenize,
                    int lowercase, nmt_bleu_result *out, nmt_err *err)
{
    bleu_opts o;
    memset(&o, 0, sizeof o); /* sacreBLEU's BLEU() defaults */
    o.lowercase = lowercase;
    if (tokenize && bleu_tokenize_parse(tokenize, &o.tokenize))
        return nmt_fail(err, NMT_ERR_ARG, "unknown BLEU tokenizer '%s' (13a, intl or none)", tokenize);
    const char **row;
    int rc = corpus_args(&row, hyps, refs, n_refs, n, out, "nmt_bleu_corpus", err);
    bleu_stats st;
    bleu_score s;
    memset(&st, 0, sizeof st);
    for (int i = 0, k; i < n && !rc; i++)
        if (!(rc = refs_of(row, &k, refs, n_refs, i, "nmt_bleu_corpus", err))) rc = bleu_add_sentence(&st, hyps[i], row, k, &o, err);
    free(row);
    if (rc || (rc = bleu_compute(&s, &st, &o, err))) return rc;
    out->score = s.score;
    for (int k = 0; k < 4; k++) {
        out->counts[k] = s.match[k];
        out->totals[k] = s.total[k];
        out->precisions[k] = s.precisions[k];
    }
    out->bp = s.bp;
    out->sys_len = s.hyp_len;
    out->ref_len = s.ref_len;
    return NMT_OK;
}

int nmt_chrf_corpus(const char *const *hyps, const char *const *const *refs, int n_refs, int n, int lowercase,
                    double *score, nmt_err *err)
{
    const char **row;
    int rc = corpus_args(&row, hyps, refs, n_refs, n, score, "nmt_chrf_corpus", err);
    chrf_stats st;
    memset(&st, 0, sizeof st);
    chrf_opts o = {lowercase, 0}; /* sacreBLEU's CHRF(): characters only */
    for (int i = 0, k; i < n && !rc; i++)
        if (!(rc = refs_of(row, &k, refs, n_refs, i, "nmt_chrf_corpus", err))) rc = chrf_add_sentence(&st, hyps[i], row, k, &o, err);
    free(row);
    if (!rc) *score = chrf_compute(&st, &o);
    return rc;
}

int nmt_metric_score(int metric, const char *const *hyps, const char *const *refs, int n, double *score, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_metric_score", hyps, refs, score);
    if (bad || (n > 0 && ((bad = nmt_strs_null(err, "nmt_metric_score", "hyps", hyps, n)) ||
                          (bad = nmt_strs_null(err, "nmt_metric_score", "refs", refs, n)))))
        return bad;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "%d segments to score", n);
    if (metric == NMT_METRIC_BLEU) {
        nmt_bleu_result r;
        int rc = nmt_bleu_corpus(hyps, &refs, 1, n, NULL, 0, &r, err);
        if (!rc) *score = r.score;
        return rc;
    }
    if (metric == NMT_METRIC_CHRF) return nmt_chrf_corpus(hyps, &refs, 1, n, 0, score, err);
    return nmt_fail(err, NMT_ERR_ARG, "%s is not a score of translations", nmt_metric_name(metric));
}
