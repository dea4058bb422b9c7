/* metric.c: the corpus scores a training run validates by (nmt_metric_score): BLEU and chrF of
 * whole dev sets, through the sacreBLEU-exact scorers of bleu.c and chrf.c, behind the scorer
 * type the core calls back, so that the core itself never links the metrics (their names are
 * the core's: src/train/valid_metric.c). */
#include <string.h>

#include "eval/bleu.h"
#include "eval/chrf.h"
#include "base/err.h"

int nmt_metric_score(int metric, const char *const *hyps, const char *const *refs, int n, double *score, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_metric_score", hyps, refs, score);
    if (bad || (n > 0 && ((bad = nmt_strs_null(err, "nmt_metric_score", "hyps", hyps, n)) ||
                          (bad = nmt_strs_null(err, "nmt_metric_score", "refs", refs, n)))))
        return bad;
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "%d segments to score", n);
    int rc = NMT_OK;
    if (metric == NMT_METRIC_BLEU) {
        bleu_stats st;
        bleu_opts o;
        bleu_score s;
        memset(&st, 0, sizeof st);
        memset(&o, 0, sizeof o); /* sacreBLEU's BLEU() defaults */
        for (int i = 0; i < n && !rc; i++) rc = bleu_add_sentence(&st, hyps[i], &refs[i], 1, &o, err);
        if (!rc && !(rc = bleu_compute(&s, &st, &o, err))) *score = s.score;
        return rc;
    }
    if (metric == NMT_METRIC_CHRF) {
        chrf_stats st;
        memset(&st, 0, sizeof st);
        for (int i = 0; i < n && !rc; i++) rc = chrf_add_sentence(&st, hyps[i], &refs[i], 1, NULL, err);
        if (!rc) *score = chrf_compute(&st, NULL); /* sacreBLEU's CHRF() */
        return rc;
    }
    return nmt_fail(err, NMT_ERR_ARG, "%s is not a score of translations", nmt_metric_name(metric));
}
