/* bleu_text.c: text as sacreBLEU sees it before counting n-grams or edits: Python's str
 * semantics (code points, str.lower() with its final-sigma rule, str.split() whitespace), BLEU's
 * 13a and intl tokenizers and TER's tercom normalisation, giving each segment's tokens
 * (bleu_segment.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/bleu.h"
#include "eval/bleu_segment.h"
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
 * (Python's str.replace, and re.sub for a pattern without special characters). */
static int cp_replace(cpbuf *dst, const cpbuf *src, const char *pat, const char *rep)
{
    size_t pn = strlen(pat), rn = strlen(rep);
    /* at most src->n / pn occurrences, each rn - pn longer */
    if (cp_reserve(dst, src->n + 1 + (rn > pn ? src->n / pn * (rn - pn) : 0))) return -1;
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
 * "-\n" line breaks, unescape four HTML entities, pad with spaces, then four substitutions.
 * tercom: sacreBLEU's TercomTokenizer normalisation (tokenizer_ter.py, after tercom's
 * Normalizer.java), the same steps without "<skipped>" and with possessives split off
 * ("'s " -> " 's "; its second rule, "'s" at the very end, cannot match after the padding). */
static int tokenize_13a(cpbuf *a, cpbuf *b, int tercom)
{
    if (!tercom) {
        if (cp_replace(b, a, "<skipped>", "")) return -1;
        cp_swap(a, b);
    }
    if (cp_replace(b, a, "-\n", "")) return -1;
    if (cp_replace(a, b, "\n", " ")) return -1;
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
    if (tercom) {
        if (cp_replace(b, a, "'s ", " 's ")) return -1;
        cp_swap(a, b);
    }
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


/* TER's no_punct: re.sub(r'[\.,\?:;!\"\(\)]', '', s). */
static void drop_punct(cpbuf *a)
{
    size_t k = 0;
    for (size_t i = 0; i < a->n; i++)
        if (!(a->v[i] < 0x80 && strchr(".,?:;!\"()", (int)a->v[i]))) a->v[k++] = a->v[i];
    a->n = k;
}

/* ======================= segments ======================= */

void segment_free(segment *s)
{
    free(s->text.v);
    free(s->tok_off);
    free(s->tok_len);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* The tokens of s->text: maximal runs of non-whitespace (str.split()). */
static int split_tokens(segment *s)
{
    const cpbuf *a = &s->text;
    size_t ntok = 0;
    for (size_t i = 0; i < a->n; i++)
        if (!bleu_is_space(a->v[i]) && (i == 0 || bleu_is_space(a->v[i - 1]))) ntok++;
    s->tok_off = malloc((ntok + 1) * sizeof *s->tok_off);
    s->tok_len = malloc((ntok + 1) * sizeof *s->tok_len);
    s->ids = malloc((ntok + 1) * sizeof *s->ids);
    if (!s->tok_off || !s->tok_len || !s->ids) return -1;
    for (size_t i = 0; i < a->n;) {
        if (bleu_is_space(a->v[i])) { i++; continue; }
        size_t j = i;
        while (j < a->n && !bleu_is_space(a->v[j])) j++;
        s->tok_off[s->ntok] = i;
        s->tok_len[s->ntok] = j - i;
        s->ntok++;
        i = j;
    }
    return 0;
}

/* BLEU._preprocess_segment (lower(), rstrip(), tokenize) or TER's (rstrip(), then
 * TercomTokenizer: lower() unless case-sensitive, normalise, drop punctuation); then split(). */
int segment_init(segment *s, const char *line, const seg_prep *p, nmt_err *err)
{
    memset(s, 0, sizeof *s);
    uint32_t *v;
    size_t n;
    int rc = bleu_decode_text(&v, &n, line, p->lowercase, err);
    if (rc) return rc;
    while (n > 0 && bleu_is_space(v[n - 1])) n--; /* rstrip() */
    cpbuf a = {v, n, n + 1}, b = {NULL, 0, 0};
    int bad = 0;
    if (p->tok == SEG_TOK_13A || p->tok == SEG_TOK_TERCOM) bad = tokenize_13a(&a, &b, p->tok == SEG_TOK_TERCOM);
    else if (p->tok == SEG_TOK_INTL) bad = tokenize_intl(&a, &b);
    free(b.v);
    if (p->no_punct) drop_punct(&a);
    s->text = a;
    if (bad || split_tokens(s)) {
        segment_free(s);
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory tokenizing a %zu-byte line", strlen(line));
    }
    return NMT_OK;
}

int cpspan_cmp(const void *pa, const void *pb)
{
    const cpspan *a = pa, *b = pb;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    for (size_t i = 0; i < a->len; i++)
        if (a->p[i] != b->p[i]) return a->p[i] < b->p[i] ? -1 : 1;
    return 0;
}

/* A token and where its id goes; the span first, so that cpspan_cmp sorts these. */
typedef struct tokref {
    cpspan s;
    uint32_t *id;
} tokref;

/* Numbers the distinct tokens of segs[0..nseg) from 1 so that tokens compare as integers. */
static int assign_ids(segment *segs, int nseg)
{
    size_t total = 0;
    for (int s = 0; s < nseg; s++) total += segs[s].ntok;
    tokref *r = malloc((total + 1) * sizeof *r);
    if (!r) return -1;
    size_t k = 0;
    for (int s = 0; s < nseg; s++)
        for (size_t t = 0; t < segs[s].ntok; t++)
            r[k++] = (tokref){{segs[s].text.v + segs[s].tok_off[t], segs[s].tok_len[t]}, &segs[s].ids[t]};
    qsort(r, total, sizeof *r, cpspan_cmp);
    uint32_t id = 0;
    for (size_t i = 0; i < total; i++) {
        if (i == 0 || cpspan_cmp(&r[i - 1].s, &r[i].s) != 0) id++;
        *r[i].id = id;
    }
    free(r);
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

void segments_free(segment *segs, int nseg)
{
    for (int s = 0; segs && s < nseg; s++) segment_free(&segs[s]);
    free(segs);
}

int segments_init(segment **out, int *nseg, const char *hyp, const char *const *refs, int nrefs,
                  const seg_prep *p, nmt_err *err)
{
    *out = NULL;
    *nseg = 0;
    if (!hyp) return nmt_fail(err, NMT_ERR_ARG, "no hypothesis");
    int present = 0;
    for (int r = 0; r < nrefs; r++) present += refs[r] != NULL;
    if (nrefs < 1 || present == 0) return nmt_fail(err, NMT_ERR_ARG, "no reference");
    segment *segs = calloc((size_t)present + 1, sizeof *segs);
    if (!segs) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    int n = 0, rc = segment_init(&segs[0], hyp, p, err);
    if (rc) prefix_err(err, rc, "hypothesis");
    else n++;
    for (int r = 0; r < nrefs && !rc; r++) {
        if (!refs[r]) continue;
        if ((rc = segment_init(&segs[n], refs[r], p, err))) {
            char what[32];
            snprintf(what, sizeof what, "reference %d", r + 1);
            prefix_err(err, rc, what);
        } else {
            n++;
        }
    }
    if (!rc && assign_ids(segs, n)) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory numbering tokens");
    if (rc) {
        segments_free(segs, n);
        return rc;
    }
    *out = segs;
    *nseg = n;
    return NMT_OK;
}

int segment_join(char **out, const segment *s, nmt_err *err)
{
    size_t cap = 1;
    for (size_t t = 0; t < s->ntok; t++) cap += 4 * s->tok_len[t] + 1;
    char *buf = malloc(cap), *q = buf;
    if (!buf) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < s->ntok; t++) {
        if (t) *q++ = ' ';
        for (size_t i = 0; i < s->tok_len[t]; i++) q += utf8_encode(s->text.v[s->tok_off[t] + i], q);
    }
    *q = '\0';
    *out = buf;
    return NMT_OK;
}
