/* bleu.c: BLEU exactly as sacreBLEU 2.x (mjpost/sacrebleu, metrics/bleu.py) computes it:
 * tokenizers 13a / intl / none, n-gram statistics clipped over several references, and the
 * score  BLEU = BP * exp( sum_{n<=N} log p_n / N ),  BP = exp(1 - r/c) when c < r, else 1,
 * with p_n the modified n-gram precision in percent and N = 4 (fewer with effective order).
 * Text is handled as Python would (bleu_text.c): code points, str.lower(), str.split(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/bleu_segment.h"
#include "base/err.h"
#include "text/unicode.h"

/* ======================= n-gram statistics ======================= */

/* An n-gram as token ids, unused positions 0, so one comparison serves every order. */
typedef struct ngram {
    uint32_t id[BLEU_MAX_ORDER];
} ngram;

static int ngram_cmp(const void *pa, const void *pb)
{
    const ngram *a = pa, *b = pb;
    for (int k = 0; k < BLEU_MAX_ORDER; k++)
        if (a->id[k] != b->id[k]) return a->id[k] < b->id[k] ? -1 : 1;
    return 0;
}

/* The n-grams of order n of seg, sorted and folded into distinct ones with counts; returns the
 * number of distinct n-grams (keys and counts need seg->ntok slots). */
static size_t count_ngrams(ngram *keys, uint32_t *counts, const segment *seg, int n)
{
    if (seg->ntok < (size_t)n) return 0;
    size_t m = seg->ntok - (size_t)n + 1;
    for (size_t i = 0; i < m; i++) {
        memset(&keys[i], 0, sizeof keys[i]);
        for (int k = 0; k < n; k++) keys[i].id[k] = seg->ids[i + (size_t)k];
    }
    qsort(keys, m, sizeof *keys, ngram_cmp);
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u > 0 && ngram_cmp(&keys[u - 1], &keys[i]) == 0) {
            counts[u - 1]++;
        } else {
            keys[u] = keys[i];
            counts[u++] = 1;
        }
    }
    return u;
}

/* Count of key among keys[0..n) (sorted, distinct), 0 when absent. */
static uint32_t lookup(const ngram *keys, const uint32_t *counts, size_t n, const ngram *key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = ngram_cmp(&keys[mid], key);
        if (c == 0) return counts[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The preprocessing BLEU's options ask for. */
static seg_prep prep_of(const bleu_opts *o)
{
    seg_prep p = {(enum seg_tok)o->tokenize, o->lowercase, 0};
    return p;
}

static int check_opts(const bleu_opts *o, nmt_err *err)
{
    if ((unsigned)o->tokenize > BLEU_TOK_NONE)
        return nmt_fail(err, NMT_ERR_ARG, "unknown BLEU tokenizer %d", (int)o->tokenize);
    if ((unsigned)o->smooth > BLEU_SMOOTH_ADD_K)
        return nmt_fail(err, NMT_ERR_ARG, "unknown BLEU smoothing %d", (int)o->smooth);
    if (!(o->smooth_value >= 0 && o->smooth_value < HUGE_VAL))
        return nmt_fail(err, NMT_ERR_ARG, "BLEU smoothing value %g: must be finite and >= 0",
                        o->smooth_value);
    return NMT_OK;
}

void bleu_stats_add(bleu_stats *acc, const bleu_stats *x)
{
    acc->hyp_len += x->hyp_len;
    acc->ref_len += x->ref_len;
    for (int k = 0; k < BLEU_MAX_ORDER; k++) acc->match[k] += x->match[k], acc->total[k] += x->total[k];
}

int bleu_add_sentence(bleu_stats *st, const char *hyp, const char *const *refs, int nrefs,
                      const bleu_opts *opts, nmt_err *err)
{
    bleu_opts def = {0};
    const bleu_opts *o = opts ? opts : &def;
    int rc = check_opts(o, err);
    if (rc) return rc;
    segment *segs;
    int nseg;
    seg_prep p = prep_of(o);
    rc = segments_init(&segs, &nseg, hyp, refs, nrefs, &p, err);
    if (rc) return rc;
    ngram *keys = NULL, *rkeys = NULL;
    uint32_t *counts = NULL, *rcounts = NULL, *refmax = NULL;

    /* Closest reference length, the shorter one on a tie (BLEU._get_closest_ref_len). */
    int64_t hyp_len = (int64_t)segs[0].ntok, ref_len = -1, best = -1;
    for (int s = 1; s < nseg; s++) {
        int64_t len = (int64_t)segs[s].ntok, diff = llabs(hyp_len - len);
        if (best < 0 || diff < best) {
            best = diff;
            ref_len = len;
        } else if (diff == best && len < ref_len) {
            ref_len = len;
        }
    }

    size_t maxtok = 1;
    for (int s = 0; s < nseg; s++)
        if (segs[s].ntok > maxtok) maxtok = segs[s].ntok;
    keys = malloc(maxtok * sizeof *keys);
    rkeys = malloc(maxtok * sizeof *rkeys);
    counts = malloc(maxtok * sizeof *counts);
    rcounts = malloc(maxtok * sizeof *rcounts);
    refmax = malloc(maxtok * sizeof *refmax);
    if (!keys || !rkeys || !counts || !rcounts || !refmax) goto nomem;

    bleu_stats add = {0};
    add.hyp_len = hyp_len;
    add.ref_len = ref_len;
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        size_t u = count_ngrams(keys, counts, &segs[0], n);
        if (u == 0) continue;
        /* An n-gram may be matched as often as the reference that has it most often. */
        memset(refmax, 0, u * sizeof *refmax);
        for (int s = 1; s < nseg; s++) {
            size_t ru = count_ngrams(rkeys, rcounts, &segs[s], n);
            for (size_t i = 0; i < u; i++) {
                uint32_t c = lookup(rkeys, rcounts, ru, &keys[i]);
                if (c > refmax[i]) refmax[i] = c;
            }
        }
        for (size_t i = 0; i < u; i++) {
            add.total[n - 1] += counts[i];
            add.match[n - 1] += counts[i] < refmax[i] ? counts[i] : refmax[i];
        }
    }
    bleu_stats_add(st, &add);
    rc = NMT_OK;
    goto done;
nomem:
    rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory counting n-grams");
done:
    segments_free(segs, nseg);
    free(keys);
    free(rkeys);
    free(counts);
    free(rcounts);
    free(refmax);
    return rc;
}

/* ======================= the score ======================= */

static double smooth_value_of(const bleu_opts *o)
{
    if (o->smooth_value > 0) return o->smooth_value;
    return o->smooth == BLEU_SMOOTH_FLOOR ? 0.1 : 1.0; /* BLEU.SMOOTH_DEFAULTS */
}

/* sacreBLEU's my_log: log(0) is floored to -9999999999 so that exp() of the mean gives 0. */
static double floored_log(double x)
{
    return x == 0.0 ? -9999999999.0 : log(x);
}

int bleu_compute(bleu_score *out, const bleu_stats *st, const bleu_opts *opts, nmt_err *err)
{
    bleu_opts def = {0};
    const bleu_opts *o = opts ? opts : &def;
    int rc = check_opts(o, err);
    if (rc) return rc;
    memset(out, 0, sizeof *out);
    out->hyp_len = st->hyp_len;
    out->ref_len = st->ref_len;
    for (int n = 0; n < BLEU_MAX_ORDER; n++) {
        out->match[n] = (double)st->match[n];
        out->total[n] = (double)st->total[n];
    }
    /* The operations below follow BLEU.compute_bleu one for one, so that the doubles come out
     * bit-identical to Python's. */
    double c = (double)st->hyp_len, r = (double)st->ref_len;
    if (st->hyp_len < st->ref_len) out->bp = st->hyp_len > 0 ? exp(1.0 - r / c) : 0.0;
    else out->bp = 1.0;
    out->ratio = st->ref_len > 0 ? c / r : 0.0;
    out->eff_order = BLEU_MAX_ORDER;

    int any = 0;
    for (int n = 0; n < BLEU_MAX_ORDER; n++) any |= st->match[n] != 0;
    if (!any) return NMT_OK; /* no match at all: 0 whatever the smoothing (sacreBLEU #141) */

    double k = smooth_value_of(o), mteval = 1.0;
    for (int n = 1; n <= BLEU_MAX_ORDER; n++) {
        if (o->smooth == BLEU_SMOOTH_ADD_K && n > 1) {
            out->match[n - 1] += k;
            out->total[n - 1] += k;
        }
        if (out->total[n - 1] == 0) break;
        if (o->effective_order) out->eff_order = n;
        if (out->match[n - 1] == 0) {
            if (o->smooth == BLEU_SMOOTH_EXP) {
                mteval *= 2;
                out->precisions[n - 1] = 100.0 / (mteval * out->total[n - 1]);
            } else if (o->smooth == BLEU_SMOOTH_FLOOR) {
                out->precisions[n - 1] = 100.0 * k / out->total[n - 1];
            }
        } else {
            out->precisions[n - 1] = 100.0 * out->match[n - 1] / out->total[n - 1];
        }
    }
    double sum = 0.0;
    for (int n = 0; n < out->eff_order; n++) sum += floored_log(out->precisions[n]);
    out->score = out->bp * exp(sum / out->eff_order);
    return NMT_OK;
}

bleu_opts bleu_sentence_opts(void)
{
    bleu_opts o = {0};
    o.effective_order = 1;
    return o;
}

int bleu_sentence(bleu_score *out, const char *hyp, const char *const *refs, int nrefs,
                  const bleu_opts *opts, nmt_err *err)
{
    bleu_opts def = bleu_sentence_opts();
    const bleu_opts *o = opts ? opts : &def;
    bleu_stats st = {0};
    int rc = bleu_add_sentence(&st, hyp, refs, nrefs, o, err);
    if (rc) return rc;
    return bleu_compute(out, &st, o, err);
}

int bleu_tokenize(char **out, const char *line, const bleu_opts *opts, nmt_err *err)
{
    bleu_opts def = {0};
    const bleu_opts *o = opts ? opts : &def;
    int rc = check_opts(o, err);
    if (rc) return rc;
    segment s;
    seg_prep p = prep_of(o);
    rc = segment_init(&s, line, &p, err);
    if (rc) return rc;
    rc = segment_join(out, &s, err);
    segment_free(&s);
    return rc;
}

/* ======================= names and signature ======================= */

static const char *const tok_names[] = {"13a", "intl", "none"};
static const char *const smooth_names[] = {"exp", "none", "floor", "add-k"};

const char *bleu_tokenize_name(enum bleu_tokenize t)
{
    return (unsigned)t <= BLEU_TOK_NONE ? tok_names[t] : "?";
}

const char *bleu_smooth_name(enum bleu_smooth s)
{
    return (unsigned)s <= BLEU_SMOOTH_ADD_K ? smooth_names[s] : "?";
}

int bleu_tokenize_parse(const char *name, enum bleu_tokenize *out)
{
    for (int i = 0; i <= BLEU_TOK_NONE; i++)
        if (!strcmp(name, tok_names[i])) {
            *out = (enum bleu_tokenize)i;
            return NMT_OK;
        }
    return NMT_ERR_ARG;
}

int bleu_smooth_parse(const char *name, enum bleu_smooth *out)
{
    for (int i = 0; i <= BLEU_SMOOTH_ADD_K; i++)
        if (!strcmp(name, smooth_names[i])) {
            *out = (enum bleu_smooth)i;
            return NMT_OK;
        }
    return NMT_ERR_ARG;
}

int bleu_signature(char *buf, size_t size, const bleu_opts *opts, int nrefs, const char *version)
{
    bleu_opts def = {0};
    const bleu_opts *o = opts ? opts : &def;
    char smooth[64];
    /* Methods that take a value show it with two decimals: "floor[0.10]", "add-k[1.00]". */
    if (o->smooth == BLEU_SMOOTH_FLOOR || o->smooth == BLEU_SMOOTH_ADD_K)
        snprintf(smooth, sizeof smooth, "%s[%.2f]", bleu_smooth_name(o->smooth),
                 smooth_value_of(o));
    else
        snprintf(smooth, sizeof smooth, "%s", bleu_smooth_name(o->smooth));
    return snprintf(buf, size, "nrefs:%d|case:%s|eff:%s|tok:%s|smooth:%s|version:%s", nrefs,
                    o->lowercase ? "lc" : "mixed", o->effective_order ? "yes" : "no",
                    bleu_tokenize_name(o->tokenize), smooth, version);
}
