/* chrf.c: chrF (Popović 2015) and chrF++ (Popović 2017) as sacreBLEU 2.x computes them
 * (mjpost/sacrebleu, metrics/chrf.py). Per order n: the character n-grams of a segment with all
 * whitespace removed (n = 1..6), then, for chrF++, its word n-grams (n = 1..word_order) over the
 * words split at whitespace with one ASCII punctuation character split off a word's end (or, if
 * none, its start). P_n = matches / hyp n-grams, R_n = matches / ref n-grams; P and R are
 * averaged over the orders where both sides have n-grams ("effective order"), then
 *     chrF = 100 * (1 + b^2) P R / (b^2 P + R),  b = 2. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "eval/bleu.h" /* bleu_decode_text, bleu_is_space: the Python str semantics */
#include "eval/chrf.h"
#include "base/err.h"

/* An n-gram is a cpspan (bleu.h). Character n-grams point into the whitespace-free text; word
 * n-grams into the words joined by single spaces, so that n words are one span too. */
typedef cpspan gram;
#define gram_cmp cpspan_cmp

/* One side of a comparison (the hypothesis or a reference): its text and, per order, its
 * distinct n-grams sorted, with their counts and their total. */
typedef struct side {
    uint32_t *chars;        /* code points without whitespace */
    uint32_t *words;        /* the words joined by single spaces */
    size_t nchars, ntok, *tok_off, *tok_end;
    gram *keys[CHRF_MAX_ORDERS];
    uint32_t *counts[CHRF_MAX_ORDERS];
    size_t uniq[CHRF_MAX_ORDERS];
    int64_t total[CHRF_MAX_ORDERS];
} side;

static void side_free(side *s)
{
    free(s->chars);
    free(s->words);
    free(s->tok_off);
    free(s->tok_end);
    for (int k = 0; k < CHRF_MAX_ORDERS; k++) {
        free(s->keys[k]);
        free(s->counts[k]);
    }
    memset(s, 0, sizeof *s);
}

/* Python's string.punctuation: the ASCII punctuation and symbol characters. */
static int is_ascii_punct(uint32_t c)
{
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

/* Appends v[a..b) to s->words as one more token. */
static void add_token(side *s, size_t *k, const uint32_t *v, size_t a, size_t b)
{
    if (s->ntok) s->words[(*k)++] = ' ';
    s->tok_off[s->ntok] = *k;
    for (size_t i = a; i < b; i++) s->words[(*k)++] = v[i];
    s->tok_end[s->ntok++] = *k;
}

/* CHRF._remove_punctuation over the decoded line v[0..n): str.split(), then a word longer than
 * one character loses a punctuation character at its end, else at its start, as a token of its
 * own. */
static int split_words(side *s, const uint32_t *v, size_t n)
{
    /* at most two tokens per word, one separator per token: 2n + 1 code points suffice */
    s->words = malloc((2 * n + 1) * sizeof *s->words);
    s->tok_off = malloc((n + 1) * sizeof *s->tok_off);
    s->tok_end = malloc((n + 1) * sizeof *s->tok_end);
    if (!s->words || !s->tok_off || !s->tok_end) return -1;
    size_t k = 0;
    for (size_t a = 0; a < n;) {
        if (bleu_is_space(v[a])) { a++; continue; }
        size_t b = a;
        while (b < n && !bleu_is_space(v[b])) b++;
        if (b - a > 1 && is_ascii_punct(v[b - 1])) {
            add_token(s, &k, v, a, b - 1);
            add_token(s, &k, v, b - 1, b);
        } else if (b - a > 1 && is_ascii_punct(v[a])) {
            add_token(s, &k, v, a, a + 1);
            add_token(s, &k, v, a + 1, b);
        } else {
            add_token(s, &k, v, a, b);
        }
        a = b;
    }
    return 0;
}

/* Sorts keys[0..m) and folds them into distinct n-grams with counts; returns how many. */
static size_t fold_grams(gram *keys, uint32_t *counts, size_t m)
{
    qsort(keys, m, sizeof *keys, gram_cmp);
    size_t u = 0;
    for (size_t i = 0; i < m; i++) {
        if (u > 0 && gram_cmp(&keys[u - 1], &keys[i]) == 0) {
            counts[u - 1]++;
        } else {
            keys[u] = keys[i];
            counts[u++] = 1;
        }
    }
    return u;
}

/* Order k's n-grams of s: characters for k < CHRF_ORDER, words after. */
static int count_order(side *s, int k)
{
    int word = k >= CHRF_ORDER;
    size_t n = (size_t)(word ? k - CHRF_ORDER + 1 : k + 1), len = word ? s->ntok : s->nchars;
    size_t m = len >= n ? len - n + 1 : 0;
    s->keys[k] = malloc((m + 1) * sizeof *s->keys[k]);
    s->counts[k] = malloc((m + 1) * sizeof *s->counts[k]);
    if (!s->keys[k] || !s->counts[k]) return -1;
    for (size_t i = 0; i < m; i++)
        s->keys[k][i] = word ? (gram){s->words + s->tok_off[i], s->tok_end[i + n - 1] - s->tok_off[i]}
                             : (gram){s->chars + i, n};
    s->total[k] = (int64_t)m;
    s->uniq[k] = fold_grams(s->keys[k], s->counts[k], m);
    return 0;
}

/* The n-grams of text for every order opts asks for. */
static int side_init(side *s, const char *text, const chrf_opts *o, nmt_err *err)
{
    memset(s, 0, sizeof *s);
    uint32_t *v;
    size_t n;
    int rc = bleu_decode_text(&v, &n, text, o->lowercase, err);
    if (rc) return rc;
    int bad = o->word_order > 0 && split_words(s, v, n);
    /* ''.join(line.split()) for the characters, in place */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!bleu_is_space(v[i])) v[k++] = v[i];
    s->chars = v;
    s->nchars = k;
    for (int r = 0; r < CHRF_ORDER + o->word_order && !bad; r++) bad = count_order(s, r);
    if (bad) {
        side_free(s);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory counting the n-grams of a %zu-byte line", strlen(text));
    }
    return NMT_OK;
}

/* Sum over common n-grams of the smaller count (Counter & Counter). */
static int64_t common(const side *h, const side *r, int k)
{
    int64_t m = 0;
    size_t i = 0, j = 0;
    while (i < h->uniq[k] && j < r->uniq[k]) {
        int c = gram_cmp(&h->keys[k][i], &r->keys[k][j]);
        if (c < 0) i++;
        else if (c > 0) j++;
        else {
            m += h->counts[k][i] < r->counts[k][j] ? h->counts[k][i] : r->counts[k][j];
            i++;
            j++;
        }
    }
    return m;
}

double chrf_compute(const chrf_stats *st, const chrf_opts *opts)
{
    /* CHRF._compute_f_score with eps_smoothing off, operation for operation. */
    const double factor = (double)CHRF_BETA * CHRF_BETA;
    int orders = CHRF_ORDER + (opts ? opts->word_order : 0);
    double avg_prec = 0.0, avg_rec = 0.0;
    int eff = 0;
    for (int i = 0; i < orders && i < CHRF_MAX_ORDERS; i++) {
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
                      const chrf_opts *opts, nmt_err *err)
{
    chrf_opts def = {0};
    const chrf_opts *o = opts ? opts : &def;
    if (o->word_order < 0 || o->word_order > CHRF_MAX_WORD_ORDER)
        return nmt_fail(err, NMT_ERR_ARG, "chrF word order %d: expected 0 to %d", o->word_order, CHRF_MAX_WORD_ORDER);
    if (!hyp) return nmt_fail(err, NMT_ERR_ARG, "no hypothesis");
    int present = 0, orders = CHRF_ORDER + o->word_order;
    for (int r = 0; r < nrefs; r++) present += refs[r] != NULL;
    if (nrefs < 1 || present == 0) return nmt_fail(err, NMT_ERR_ARG, "no reference");

    side h, r;
    int rc = side_init(&h, hyp, o, err);
    if (rc) {
        prefix_err(err, rc, "hypothesis");
        return rc;
    }
    chrf_stats best = {0};
    double best_f = -1.0;
    for (int i = 0; i < nrefs && !rc; i++) {
        if (!refs[i]) continue;
        if ((rc = side_init(&r, refs[i], o, err))) {
            char what[32];
            snprintf(what, sizeof what, "reference %d", i + 1);
            prefix_err(err, rc, what);
            break;
        }
        chrf_stats s = {0};
        for (int k = 0; k < orders; k++) {
            s.hyp[k] = h.total[k];
            s.ref[k] = r.total[k];
            s.match[k] = common(&h, &r, k);
        }
        side_free(&r);
        /* sacreBLEU keeps the reference with the best segment score, the first on a tie. */
        double f = chrf_compute(&s, o);
        if (f > best_f) {
            best_f = f;
            best = s;
        }
    }
    side_free(&h);
    if (rc) return rc;
    for (int k = 0; k < orders; k++) {
        st->hyp[k] += best.hyp[k];
        st->ref[k] += best.ref[k];
        st->match[k] += best.match[k];
    }
    return NMT_OK;
}

int chrf_sentence(double *score, const char *hyp, const char *const *refs, int nrefs,
                  const chrf_opts *opts, nmt_err *err)
{
    chrf_stats st = {0};
    int rc = chrf_add_sentence(&st, hyp, refs, nrefs, opts, err);
    if (rc) return rc;
    *score = chrf_compute(&st, opts);
    return NMT_OK;
}

const char *chrf_name(char *buf, size_t size, const chrf_opts *opts)
{
    int w = opts ? opts->word_order : 0;
    /* CHRFScore's name: f'chrF{beta}' + '+' * word_order */
    snprintf(buf, size, "chrF%d%.*s", CHRF_BETA, w < 0 ? 0 : w, "++++++++++++++++");
    return buf;
}

int chrf_signature(char *buf, size_t size, const chrf_opts *opts, int nrefs, const char *version)
{
    chrf_opts def = {0};
    const chrf_opts *o = opts ? opts : &def;
    return snprintf(buf, size, "nrefs:%d|case:%s|eff:yes|nc:%d|nw:%d|space:no|version:%s", nrefs,
                    o->lowercase ? "lc" : "mixed", CHRF_ORDER, o->word_order, version);
}
