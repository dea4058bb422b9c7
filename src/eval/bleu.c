/* bleu.c: BLEU exactly as sacreBLEU 2.x (mjpost/sacrebleu, metrics/bleu.py) computes it:
 * tokenizers 13a / intl / none, n-gram statistics clipped over several references, and the
 * score  BLEU = BP * exp( sum_{n<=N} log p_n / N ),  BP = exp(1 - r/c) when c < r, else 1,
 * with p_n the modified n-gram precision in percent and N = 4 (fewer with effective order).
 * Text is handled as Python would: code points, str.lower(), str.split() whitespace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "base/err.h"
#include "text/unicode.h"

/* ======================= Python str semantics ======================= */

int bleu_is_space(uint32_t c)
{
    /* CPython's _PyUnicode_IsWhitespace: bidi classes WS, B, S and category Zs. */
    if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/* Unicode's derived Cased and Case_Ignorable properties (needed for the final-sigma rule of
 * str.lower()) are the general categories below plus these code points (Unicode 14 data:
 * Other_Lowercase / Other_Uppercase, and Word_Break MidLetter / MidNumLet / Single_Quote). */
static const uint32_t other_cased[][2] = {
    {0xAA, 0xAA}, {0xBA, 0xBA}, {0x2B0, 0x2B8}, {0x2C0, 0x2C1}, {0x2E0, 0x2E4}, {0x345, 0x345},
    {0x37A, 0x37A}, {0x1D2C, 0x1D6A}, {0x1D78, 0x1D78}, {0x1D9B, 0x1DBF}, {0x2071, 0x2071},
    {0x207F, 0x207F}, {0x2090, 0x209C}, {0x2160, 0x217F}, {0x24B6, 0x24E9}, {0x2C7C, 0x2C7D},
    {0xA69C, 0xA69D}, {0xA770, 0xA770}, {0xA7F8, 0xA7F9}, {0xAB5C, 0xAB5F}, {0x10780, 0x10780},
    {0x10783, 0x10785}, {0x10787, 0x107B0}, {0x107B2, 0x107BA}, {0x1F130, 0x1F149},
    {0x1F150, 0x1F169}, {0x1F170, 0x1F189},
};
static const uint32_t other_case_ignorable[][2] = {
    {0x27, 0x27}, {0x2E, 0x2E}, {0x3A, 0x3A}, {0xB7, 0xB7}, {0x387, 0x387}, {0x55F, 0x55F},
    {0x5F4, 0x5F4}, {0x2018, 0x2019}, {0x2024, 0x2024}, {0x2027, 0x2027}, {0xFE13, 0xFE13},
    {0xFE52, 0xFE52}, {0xFE55, 0xFE55}, {0xFF07, 0xFF07}, {0xFF0E, 0xFF0E}, {0xFF1A, 0xFF1A},
};

static int in_ranges(uint32_t c, const uint32_t (*r)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (c >= r[i][0] && c <= r[i][1]) return 1;
    return 0;
}

static int is_cased(uint32_t c)
{
    int k = uni_category(c);
    return k == UNI_Lu || k == UNI_Ll || k == UNI_Lt ||
           in_ranges(c, other_cased, sizeof other_cased / sizeof other_cased[0]);
}

static int is_case_ignorable(uint32_t c)
{
    int k = uni_category(c);
    return k == UNI_Mn || k == UNI_Me || k == UNI_Cf || k == UNI_Lm || k == UNI_Sk ||
           in_ranges(c, other_case_ignorable,
                     sizeof other_case_ignorable / sizeof other_case_ignorable[0]);
}

/* Capital sigma at s[i] lowercases to final sigma when a cased letter precedes it and none
 * follows, case-ignorable characters skipped on both sides (Unicode Final_Sigma, which CPython's
 * str.lower() implements). */
static int is_final_sigma(const uint32_t *s, size_t n, size_t i)
{
    size_t j = i;
    while (j > 0 && is_case_ignorable(s[j - 1])) j--;
    if (j == 0 || !is_cased(s[j - 1])) return 0;
    j = i + 1;
    while (j < n && is_case_ignorable(s[j])) j++;
    return j == n || !is_cased(s[j]);
}

int bleu_decode_text(uint32_t **out, size_t *n, const char *s, int lowercase, nmt_err *err)
{
    size_t len = strlen(s), k = 0;
    /* Every code point takes at least one byte, and the one lowercase mapping that grows
     * (U+0130, two bytes, to two code points) does not outgrow its bytes: len + 1 suffices. */
    uint32_t *raw = malloc((len + 1) * sizeof *raw);
    if (!raw) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory decoding %zu bytes", len);
    for (size_t i = 0; i < len;) {
        int m = utf8_decode(s + i, len - i, &raw[k]);
        if (m <= 0) {
            free(raw);
            return nmt_fail(err, NMT_ERR_FORMAT, "invalid UTF-8 at byte %zu", i + 1);
        }
        i += (size_t)m;
        k++;
    }
    if (lowercase) {
        uint32_t *low = malloc((len + 1) * sizeof *low);
        if (!low) {
            free(raw);
            return nmt_fail(err, NMT_ERR_NOMEM, "out of memory lowercasing %zu bytes", len);
        }
        size_t m = 0;
        for (size_t i = 0; i < k; i++) {
            uint32_t c = raw[i];
            if (c == 0x130) { /* the one unconditional multi-character lowercase mapping */
                low[m++] = 'i';
                low[m++] = 0x307;
            } else if (c == 0x3A3) {
                low[m++] = is_final_sigma(raw, k, i) ? 0x3C2 : 0x3C3;
            } else {
                low[m++] = uni_tolower(c);
            }
        }
        free(raw);
        raw = low;
        k = m;
    }
    *out = raw;
    *n = k;
    return NMT_OK;
}

/* ======================= tokenizers ======================= */

/* A growable array of code points. */
typedef struct cpbuf {
    uint32_t *v;
    size_t n, cap;
} cpbuf;

static int cp_reserve(cpbuf *b, size_t need)
{
    if (need <= b->cap) return 0;
    if (need > SIZE_MAX / (2 * sizeof *b->v)) return -1;
    size_t cap = need * 2;
    uint32_t *v = realloc(b->v, cap * sizeof *v);
    if (!v) return -1;
    b->v = v;
    b->cap = cap;
    return 0;
}

/* dst = src with every non-overlapping occurrence of pat replaced by rep, left to right
 * (Python's str.replace). rep is never longer than pat here, so dst needs src->n slots. */
static int cp_replace(cpbuf *dst, const cpbuf *src, const char *pat, const char *rep)
{
    size_t pn = strlen(pat), rn = strlen(rep);
    if (cp_reserve(dst, src->n + 1)) return -1;
    dst->n = 0;
    for (size_t i = 0; i < src->n;) {
        size_t j = 0;
        while (j < pn && i + j < src->n && src->v[i + j] == (unsigned char)pat[j]) j++;
        if (j == pn) {
            for (size_t t = 0; t < rn; t++) dst->v[dst->n++] = (unsigned char)rep[t];
            i += pn;
        } else {
            dst->v[dst->n++] = src->v[i++];
        }
    }
    return 0;
}

static int cp_contains(const cpbuf *b, uint32_t c)
{
    for (size_t i = 0; i < b->n; i++)
        if (b->v[i] == c) return 1;
    return 0;
}

typedef int (*cp_pred)(uint32_t c);

/* re.sub(r'(A)(B)', r'\1 \2 ', s) when space_first is 0, r' \1 \2' when it is 1: a scan for
 * non-overlapping two-character matches, as Python's re engine makes them. */
static int pair_pass(cpbuf *dst, const cpbuf *src, cp_pred a, cp_pred b, int space_first)
{
    if (cp_reserve(dst, 2 * src->n + 1)) return -1;
    dst->n = 0;
    for (size_t i = 0; i < src->n;) {
        if (i + 1 < src->n && a(src->v[i]) && b(src->v[i + 1])) {
            if (space_first) dst->v[dst->n++] = ' ';
            dst->v[dst->n++] = src->v[i];
            dst->v[dst->n++] = ' ';
            dst->v[dst->n++] = src->v[i + 1];
            if (!space_first) dst->v[dst->n++] = ' ';
            i += 2;
        } else {
            dst->v[dst->n++] = src->v[i++];
        }
    }
    return 0;
}

/* re.sub(r'(A)', r' \1 ', s). */
static int single_pass(cpbuf *dst, const cpbuf *src, cp_pred a)
{
    if (cp_reserve(dst, 3 * src->n + 1)) return -1;
    dst->n = 0;
    for (size_t i = 0; i < src->n; i++) {
        if (a(src->v[i])) {
            dst->v[dst->n++] = ' ';
            dst->v[dst->n++] = src->v[i];
            dst->v[dst->n++] = ' ';
        } else {
            dst->v[dst->n++] = src->v[i];
        }
    }
    return 0;
}

static void cp_swap(cpbuf *a, cpbuf *b)
{
    cpbuf t = *a;
    *a = *b;
    *b = t;
}

/* Predicates of the 13a regular expressions; Python's [0-9] is ASCII only. */
static int is_digit(uint32_t c) { return c >= '0' && c <= '9'; }
static int not_digit(uint32_t c) { return !is_digit(c); }
static int is_period_comma(uint32_t c) { return c == '.' || c == ','; }
static int is_dash(uint32_t c) { return c == '-'; }
/* [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and symbols except ' , - . (and space, which
 * it also matches to no effect on the tokens). */
static int is_13a_sep(uint32_t c)
{
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

/* The \p{..} classes of the intl tokenizer (Python's regex module, general categories). */
static int is_punct(uint32_t c) { return uni_is_punct(c); }
static int not_number(uint32_t c) { return !uni_is_number(c); }
static int is_symbol(uint32_t c) { return uni_is_symbol(c); }

/* mteval-v13a as sacreBLEU's Tokenizer13a + TokenizerRegexp do it: drop "<skipped>", join
 * "-\n" line breaks, unescape four HTML entities, pad with spaces, then four substitutions. */
static int tokenize_13a(cpbuf *a, cpbuf *b)
{
    if (cp_replace(b, a, "<skipped>", "")) return -1;
    if (cp_replace(a, b, "-\n", "")) return -1;
    if (cp_replace(b, a, "\n", " ")) return -1;
    cp_swap(a, b);
    if (cp_contains(a, '&')) {
        static const char *const ent[4][2] = {
            {"&quot;", "\""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}};
        for (int i = 0; i < 4; i++) {
            if (cp_replace(b, a, ent[i][0], ent[i][1])) return -1;
            cp_swap(a, b);
        }
    }
    /* f' {line} ': the padding lets a final period be split off (unlike intl). */
    if (cp_reserve(b, a->n + 2)) return -1;
    b->v[0] = ' ';
    memcpy(b->v + 1, a->v, a->n * sizeof *a->v);
    b->v[a->n + 1] = ' ';
    b->n = a->n + 2;
    if (single_pass(a, b, is_13a_sep)) return -1;                  /* most punctuation */
    if (pair_pass(b, a, not_digit, is_period_comma, 0)) return -1; /* . , not after a digit */
    if (pair_pass(a, b, is_period_comma, not_digit, 1)) return -1; /* . , not before a digit */
    if (pair_pass(b, a, is_digit, is_dash, 0)) return -1;          /* - after a digit */
    cp_swap(a, b);
    return 0;
}

/* mteval-v14 international as sacreBLEU's TokenizerV14International: punctuation is split off
 * unless it sits between digits; symbols always. No padding, so "1999." at the end of a line
 * keeps its period (an mteval-v14 quirk sacreBLEU keeps on purpose). */
static int tokenize_intl(cpbuf *a, cpbuf *b)
{
    if (pair_pass(b, a, not_number, is_punct, 0)) return -1;
    if (pair_pass(a, b, is_punct, not_number, 1)) return -1;
    if (single_pass(b, a, is_symbol)) return -1;
    cp_swap(a, b);
    return 0;
}

/* One segment as BLEU sees it: its code points after tokenization and its tokens' spans. */
typedef struct segment {
    cpbuf text;
    size_t *tok_off, *tok_len;
    uint32_t *ids; /* token ids, equal ids for equal tokens across the segment's hyp and refs */
    size_t ntok;
} segment;

static void segment_free(segment *s)
{
    free(s->text.v);
    free(s->tok_off);
    free(s->tok_len);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* sacreBLEU's BLEU._preprocess_segment: lower(), rstrip(), tokenize; then str.split(). */
static int segment_init(segment *s, const char *line, const bleu_opts *o, nmt_err *err)
{
    memset(s, 0, sizeof *s);
    uint32_t *v;
    size_t n;
    int rc = bleu_decode_text(&v, &n, line, o->lowercase, err);
    if (rc) return rc;
    while (n > 0 && bleu_is_space(v[n - 1])) n--; /* rstrip() */
    cpbuf a = {v, n, n + 1}, b = {NULL, 0, 0};
    int bad = 0;
    if (o->tokenize == BLEU_TOK_13A) bad = tokenize_13a(&a, &b);
    else if (o->tokenize == BLEU_TOK_INTL) bad = tokenize_intl(&a, &b);
    free(b.v);
    if (bad) {
        free(a.v);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory tokenizing a %zu-byte line",
                        strlen(line));
    }
    s->text = a;
    size_t ntok = 0;
    for (size_t i = 0; i < a.n; i++)
        if (!bleu_is_space(a.v[i]) && (i == 0 || bleu_is_space(a.v[i - 1]))) ntok++;
    s->tok_off = malloc((ntok + 1) * sizeof *s->tok_off);
    s->tok_len = malloc((ntok + 1) * sizeof *s->tok_len);
    s->ids = malloc((ntok + 1) * sizeof *s->ids);
    if (!s->tok_off || !s->tok_len || !s->ids) {
        segment_free(s);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory splitting %zu tokens", ntok);
    }
    for (size_t i = 0; i < a.n;) {
        if (bleu_is_space(a.v[i])) { i++; continue; }
        size_t j = i;
        while (j < a.n && !bleu_is_space(a.v[j])) j++;
        s->tok_off[s->ntok] = i;
        s->tok_len[s->ntok] = j - i;
        s->ntok++;
        i = j;
    }
    return NMT_OK;
}

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

typedef struct tokref {
    const uint32_t *p;
    size_t len;
    uint32_t *id;
} tokref;

static int tokref_cmp(const void *pa, const void *pb)
{
    const tokref *a = pa, *b = pb;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    for (size_t i = 0; i < a->len; i++)
        if (a->p[i] != b->p[i]) return a->p[i] < b->p[i] ? -1 : 1;
    return 0;
}

/* Numbers the distinct tokens of segs[0..nseg) from 1 so that n-grams compare as integers. */
static int assign_ids(segment *segs, int nseg)
{
    size_t total = 0;
    for (int s = 0; s < nseg; s++) total += segs[s].ntok;
    tokref *r = malloc((total + 1) * sizeof *r);
    if (!r) return -1;
    size_t k = 0;
    for (int s = 0; s < nseg; s++)
        for (size_t t = 0; t < segs[s].ntok; t++)
            r[k++] = (tokref){segs[s].text.v + segs[s].tok_off[t], segs[s].tok_len[t],
                              &segs[s].ids[t]};
    qsort(r, total, sizeof *r, tokref_cmp);
    uint32_t id = 0;
    for (size_t i = 0; i < total; i++) {
        if (i == 0 || tokref_cmp(&r[i - 1], &r[i]) != 0) id++;
        *r[i].id = id;
    }
    free(r);
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

/* Says which input a decoding error came from: "reference 2: invalid UTF-8 at byte 7". */
static void prefix_err(nmt_err *err, int rc, const char *what)
{
    if (!err || rc != NMT_ERR_FORMAT) return;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    nmt_fail(err, rc, "%s: %s", what, msg);
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

int bleu_add_sentence(bleu_stats *st, const char *hyp, const char *const *refs, int nrefs,
                      const bleu_opts *opts, nmt_err *err)
{
    bleu_opts def = {0};
    const bleu_opts *o = opts ? opts : &def;
    int rc = check_opts(o, err);
    if (rc) return rc;
    if (!hyp) return nmt_fail(err, NMT_ERR_ARG, "no hypothesis");
    int present = 0;
    for (int r = 0; r < nrefs; r++) present += refs[r] != NULL;
    if (nrefs < 1 || present == 0) return nmt_fail(err, NMT_ERR_ARG, "no reference");

    /* segs[0] is the hypothesis, segs[1..] the references that are present. */
    segment *segs = calloc((size_t)present + 1, sizeof *segs);
    if (!segs) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int nseg = 0;
    ngram *keys = NULL, *rkeys = NULL;
    uint32_t *counts = NULL, *rcounts = NULL, *refmax = NULL;

    rc = segment_init(&segs[nseg], hyp, o, err);
    if (rc) {
        prefix_err(err, rc, "hypothesis");
        goto done;
    }
    nseg++;
    for (int r = 0; r < nrefs; r++) {
        if (!refs[r]) continue;
        rc = segment_init(&segs[nseg], refs[r], o, err);
        if (rc) {
            char what[32];
            snprintf(what, sizeof what, "reference %d", r + 1);
            prefix_err(err, rc, what);
            goto done;
        }
        nseg++;
    }
    if (assign_ids(segs, nseg)) goto nomem;

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
    st->hyp_len += add.hyp_len;
    st->ref_len += add.ref_len;
    for (int n = 0; n < BLEU_MAX_ORDER; n++) {
        st->match[n] += add.match[n];
        st->total[n] += add.total[n];
    }
    rc = NMT_OK;
    goto done;
nomem:
    rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory counting n-grams");
done:
    for (int s = 0; s < nseg; s++) segment_free(&segs[s]);
    free(segs);
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
    rc = segment_init(&s, line, o, err);
    if (rc) return rc;
    size_t cap = 1;
    for (size_t t = 0; t < s.ntok; t++) cap += 4 * s.tok_len[t] + 1;
    char *buf = malloc(cap), *p = buf;
    if (!buf) {
        segment_free(&s);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    }
    for (size_t t = 0; t < s.ntok; t++) {
        if (t) *p++ = ' ';
        for (size_t i = 0; i < s.tok_len[t]; i++) p += utf8_encode(s.text.v[s.tok_off[t] + i], p);
    }
    *p = '\0';
    segment_free(&s);
    *out = buf;
    return NMT_OK;
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
