/* chrf.c: chrF (Popović 2015) as sacreBLEU 2.x computes it with CHRF()'s defaults
 * (mjpost/sacrebleu, metrics/chrf.py). Per order n = 1..6, over the characters of a segment
 * with all whitespace removed: P_n = matches / hyp n-grams, R_n = matches / ref n-grams.
 * P and R are averaged over the orders where both sides have n-grams ("effective order"), then
 *     chrF = 100 * (1 + b^2) P R / (b^2 P + R),  b = 2. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "eval/bleu.h" /* bleu_decode_text, bleu_is_space: the Python str semantics */
#include "eval/chrf.h"
#include "base/err.h"

/* A character n-gram; positions past its order are 0, which no decoded character is (the
 * input is a C string), so one comparison serves every order. */
typedef struct cgram {
    uint32_t c[CHRF_ORDER];
} cgram;

static int cgram_cmp(const void *pa, const void *pb)
{
    const cgram *a = pa, *b = pb;
    for (int k = 0; k < CHRF_ORDER; k++)
        if (a->c[k] != b->c[k]) return a->c[k] < b->c[k] ? -1 : 1;
    return 0;
}

/* The distinct n-grams of order n of s[0..len), sorted, with their counts; returns how many.
 * keys and counts need len slots. */
static size_t count_grams(cgram *keys, uint32_t *counts, const uint32_t *s, size_t len, int n)
{
    if (len < (size_t)n) return 0;
    size_t m = len - (size_t)n + 1;
    for (size_t i = 0; i < m; i++) {
        memset(&keys[i], 0, sizeof keys[i]);
        memcpy(keys[i].c, s + i, (size_t)n * sizeof *s);
    }
    qsort(keys, m, sizeof *keys, cgram_cmp);
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u > 0 && cgram_cmp(&keys[u - 1], &keys[i]) == 0) {
            counts[u - 1]++;
        } else {
            keys[u] = keys[i];
            counts[u++] = 1;
        }
    }
    return u;
}

/* Sum over common n-grams of the smaller count (Counter & Counter). */
static int64_t common(const cgram *a, const uint32_t *ac, size_t an, const cgram *b,
                      const uint32_t *bc, size_t bn)
{
    int64_t m = 0;
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        int c = cgram_cmp(&a[i], &b[j]);
        if (c < 0) i++;
        else if (c > 0) j++;
        else {
            m += ac[i] < bc[j] ? ac[i] : bc[j];
            i++;
            j++;
        }
    }
    return m;
}

/* The characters chrF sees: decoded, lowercased on request, whitespace removed
 * (''.join(line.split())). */
static int chars_of(uint32_t **out, size_t *n, const char *text, int lowercase, nmt_err *err)
{
    int rc = bleu_decode_text(out, n, text, lowercase, err);
    if (rc) return rc;
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (!bleu_is_space((*out)[i])) (*out)[k++] = (*out)[i];
    *n = k;
    return NMT_OK;
}

double chrf_compute(const chrf_stats *st)
{
    /* CHRF._compute_f_score with eps_smoothing off, operation for operation. */
    const double factor = (double)CHRF_BETA * CHRF_BETA;
    double avg_prec = 0.0, avg_rec = 0.0;
    int eff = 0;
    for (int i = 0; i < CHRF_ORDER; i++) {
        if (st->hyp[i] > 0 && st->ref[i] > 0) {
            avg_prec += (double)st->match[i] / (double)st->hyp[i];
            avg_rec += (double)st->match[i] / (double)st->ref[i];
            eff++;
        }
    }
    if (eff == 0) return 0.0;
    avg_prec /= eff;
    avg_rec /= eff;
    if (avg_prec + avg_rec == 0.0) return 0.0;
    /* Kept as separate statements so that no compiler fuses them into an FMA, which would
     * change the last bit (-std=c11 already implies -ffp-contract=off for GCC). */
    double score = (1.0 + factor) * avg_prec * avg_rec;
    double prec_w = factor * avg_prec;
    score /= prec_w + avg_rec;
    return 100.0 * score;
}

static void prefix_err(nmt_err *err, int rc, const char *what)
{
    if (!err || rc != NMT_ERR_FORMAT) return;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    nmt_fail(err, rc, "%s: %s", what, msg);
}

int chrf_add_sentence(chrf_stats *st, const char *hyp, const char *const *refs, int nrefs,
                      int lowercase, nmt_err *err)
{
    if (!hyp) return nmt_fail(err, NMT_ERR_ARG, "no hypothesis");
    int present = 0;
    for (int r = 0; r < nrefs; r++) present += refs[r] != NULL;
    if (nrefs < 1 || present == 0) return nmt_fail(err, NMT_ERR_ARG, "no reference");

    uint32_t *h = NULL, *r = NULL, *hc[CHRF_ORDER] = {0}, *rc_counts = NULL;
    cgram *hk[CHRF_ORDER] = {0}, *rk = NULL;
    size_t hn = 0, rn = 0, hu[CHRF_ORDER] = {0};
    int rc = chars_of(&h, &hn, hyp, lowercase, err);
    if (rc) {
        prefix_err(err, rc, "hypothesis");
        return rc;
    }
    /* The hypothesis n-grams, counted once for all references. */
    for (int n = 0; n < CHRF_ORDER; n++) {
        hk[n] = malloc((hn + 1) * sizeof *hk[n]);
        hc[n] = malloc((hn + 1) * sizeof *hc[n]);
        if (!hk[n] || !hc[n]) goto nomem;
        hu[n] = count_grams(hk[n], hc[n], h, hn, n + 1);
    }

    chrf_stats best = {0};
    double best_f = -1.0;
    for (int i = 0; i < nrefs; i++) {
        if (!refs[i]) continue;
        free(r);
        r = NULL;
        rc = chars_of(&r, &rn, refs[i], lowercase, err);
        if (rc) {
            char what[32];
            snprintf(what, sizeof what, "reference %d", i + 1);
            prefix_err(err, rc, what);
            goto done;
        }
        free(rk);
        free(rc_counts);
        rk = malloc((rn + 1) * sizeof *rk);
        rc_counts = malloc((rn + 1) * sizeof *rc_counts);
        if (!rk || !rc_counts) goto nomem;
        chrf_stats s = {0};
        for (int n = 0; n < CHRF_ORDER; n++) {
            size_t ru = count_grams(rk, rc_counts, r, rn, n + 1);
            s.hyp[n] = hn > (size_t)n ? (int64_t)(hn - (size_t)n) : 0;
            s.ref[n] = rn > (size_t)n ? (int64_t)(rn - (size_t)n) : 0;
            s.match[n] = common(hk[n], hc[n], hu[n], rk, rc_counts, ru);
        }
        /* sacreBLEU keeps the reference with the best segment score, the first on a tie. */
        double f = chrf_compute(&s);
        if (f > best_f) {
            best_f = f;
            best = s;
        }
    }
    for (int n = 0; n < CHRF_ORDER; n++) {
        st->hyp[n] += best.hyp[n];
        st->ref[n] += best.ref[n];
        st->match[n] += best.match[n];
    }
    rc = NMT_OK;
    goto done;
nomem:
    rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory counting character n-grams");
done:
    free(h);
    free(r);
    free(rk);
    free(rc_counts);
    for (int n = 0; n < CHRF_ORDER; n++) {
        free(hk[n]);
        free(hc[n]);
    }
    return rc;
}

int chrf_sentence(double *score, const char *hyp, const char *const *refs, int nrefs,
                  int lowercase, nmt_err *err)
{
    chrf_stats st = {0};
    int rc = chrf_add_sentence(&st, hyp, refs, nrefs, lowercase, err);
    if (rc) return rc;
    *score = chrf_compute(&st);
    return NMT_OK;
}

int chrf_signature(char *buf, size_t size, int lowercase, int nrefs, const char *version)
{
    return snprintf(buf, size, "nrefs:%d|case:%s|eff:yes|nc:%d|nw:0|space:no|version:%s", nrefs,
                    lowercase ? "lc" : "mixed", CHRF_ORDER, version);
}
