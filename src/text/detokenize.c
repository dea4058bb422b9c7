/* detokenize.c: a hand-written re-implementation of Moses' detokenizer.perl (as in
 * moses-smt/mosesdecoder 3a0631a) for en, fr and de: joins "@-@" hyphens, un-escapes the
 * tokenizer's HTML entities, then walks the space-separated words deciding for each whether it
 * attaches to the left, to the right, or neither (punctuation, currency, English clitics,
 * French elisions, paired quotes, CJK). German has no rules of its own in the script, so it
 * gets the generic ones. */
#include <string.h>

#include "base/err.h"
#include "text/tokenize.h"
#include "text/unicode.h"

/* The tokenizer's escapes and the older forms the script also reads, in its order of
 * de-escaping (&amp; last, so that "&amp;lt;" becomes "&lt;", not "<"). */
static const char *const entities[][2] = {
    {"&bar;", "|"}, {"&#124;", "|"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&bra;", "["}, {"&ket;", "]"},
    {"&quot;", "\""}, {"&apos;", "'"}, {"&#91;", "["}, {"&#93;", "]"}, {"&amp;", "&"},
};
#define NENT (sizeof entities / sizeof entities[0])

void detok_unescape_word(char *word)
{
    /* one left-to-right pass: the same result as the script's passes, since no entity holds
     * another and only &amp; can make one, which a single pass never rescans */
    char *o = word;
    for (const char *p = word; *p;) {
        size_t k = NENT;
        if (*p == '&')
            for (k = 0; k < NENT && strncmp(p, entities[k][0], strlen(entities[k][0])); k++) {}
        if (k < NENT) {
            *o++ = entities[k][1][0];
            p += strlen(entities[k][0]);
        } else {
            *o++ = *p++;
        }
    }
    *o = 0;
}

/* s/LIT/REPL/g over code points (LIT and REPL ASCII); returns the buffer holding the result. */
static tok_cpvec *replace_all(tok_cpvec *cur, tok_cpvec *nxt, const char *lit, const char *repl)
{
    size_t i = 0;
    while (i < cur->n && !(cur->v[i] == (unsigned char)lit[0] && tok_cv_match(cur, i, lit))) i++;
    if (i == cur->n) return cur;
    size_t ll = strlen(lit);
    nxt->n = 0;
    for (size_t k = 0; k < i; k++) tok_cv_push(nxt, cur->v[k]);
    while (i < cur->n) {
        if (cur->v[i] == (unsigned char)lit[0] && tok_cv_match(cur, i, lit)) {
            tok_cv_push_str(nxt, repl);
            i += ll;
        } else {
            tok_cv_push(nxt, cur->v[i++]);
        }
    }
    return nxt;
}

/* charIsCJK of detokenizer.perl: the Unicode blocks it lists (Hangul Jamo, CJK radicals ..
 * Yi, Phags-pa, Hangul syllables, compatibility ideographs and forms, halfwidth Katakana and
 * Hangul, and the Supplementary Ideographic Plane). */
static int is_cjk(uint32_t c)
{
    return (c >= 0x1100 && c <= 0x11FF) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xA840 && c <= 0xA87F)
        || (c >= 0xAC00 && c <= 0xD7AF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F)
        || (c >= 0xFF65 && c <= 0xFFDC) || (c >= 0x20000 && c <= 0x2FFFF);
}

/* Currency (\p{IsSc}) and opening brackets attach to the next word. */
static int is_right_shift(uint32_t c)
{
    return uni_category(c) == UNI_Sc || c == '(' || c == '[' || c == '{' || c == 0xBF || c == 0xA1;
}

/* Closing punctuation attaches to the previous word: [\,\.\?\!\:\;\\\%\}\]\)] */
static int is_left_shift(uint32_t c)
{
    return c < 0x80 && c && strchr(",.?!:;\\%}])", (int)c) != NULL;
}

/* [\'\"„“`] */
static int is_quote(uint32_t c)
{
    return c == '\'' || c == '"' || c == 0x201E || c == 0x201C || c == '`';
}

static int all_of(const uint32_t *w, size_t n, int (*f)(uint32_t))
{
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!f(w[i])) return 0;
    return 1;
}

static int is_low9_or_curly(uint32_t c) { return c == 0x201E || c == 0x201C || c == 0x201D; }

/* The quote counter of one quote word (%quoteCount): entries [count, len, cp...] in q. Returns
 * the index of the count, adding the key with count 0 when new; (size_t)-1 on OOM. */
static size_t quote_slot(tok_cpvec *q, const uint32_t *key, size_t len)
{
    size_t i = 0;
    while (i + 1 < q->n) {
        size_t kl = q->v[i + 1];
        if (kl == len && !memcmp(q->v + i + 2, key, len * sizeof *key)) return i;
        i += 2 + kl;
    }
    size_t at = q->n;
    tok_cv_push(q, 0);
    tok_cv_push(q, (uint32_t)len);
    for (size_t k = 0; k < len; k++) tok_cv_push(q, key[k]);
    return q->oom ? (size_t)-1 : at;
}

/* The line's words after split(/ /): word i is v[at[2i] ..] of at[2i+1] code points. */
typedef struct { const uint32_t *v; const uint32_t *at; size_t n; } words;

static const uint32_t *word(const words *d, size_t i) { return d->v + d->at[2 * i]; }
static size_t word_len(const words *d, size_t i) { return d->at[2 * i + 1]; }
/* the last code point of word i, 0 for an empty word */
static uint32_t word_last(const words *d, size_t i) { return word_len(d, i) ? word(d, i)[word_len(d, i) - 1] : 0; }

/* Whether word i of d gets a space before it, given $prependSpace (*prepend, updated for the
 * next word): the script's cases in its order. -1 when the quote counters q run out of memory. */
static int join_word(int lang, const words *d, size_t i, tok_cpvec *q, int *prepend)
{
    const uint32_t *w = word(d, i);
    size_t wl = word_len(d, i);
    int was = *prepend;
    if (wl > 0 && is_cjk(w[0])) {
        /* a second consecutive CJK word attaches to the previous one */
        *prepend = 1;
        return !(i > 0 && is_cjk(word_last(d, i - 1))) && was;
    }
    if (all_of(w, wl, is_right_shift)) { *prepend = 0; return was; }   /* currency, opening brackets */
    if (all_of(w, wl, is_left_shift)) {
        /* closing punctuation: left shift; French puts a space before ? ! : ; \ % */
        *prepend = 1;
        return lang == TOK_LANG_FR && wl == 1 && strchr("?!:;\\%", (int)w[0]);
    }
    if (lang == TOK_LANG_EN && i > 0 && wl >= 2 && w[0] == '\'' && uni_is_alphabetic(w[1])
        && uni_is_alnum(word_last(d, i - 1))) {
        *prepend = 1;   /* English clitic ('s, 're, 'll ...): left shift */
        return 0;
    }
    if (lang == TOK_LANG_FR && i + 2 <= d->n && wl >= 2 && w[wl - 1] == '\'' && uni_is_alphabetic(w[wl - 2])
        && word_len(d, i + 1) > 0 && uni_is_alphabetic(word(d, i + 1)[0])) {
        *prepend = 0;   /* French elision (l', d', qu'): right shift */
        return was;
    }
    if (!all_of(w, wl, is_quote)) { *prepend = 1; return was; }
    /* quotes alternate: an even count opens (right shift), an odd one closes */
    const uint32_t dq = '"';
    int curly = all_of(w, wl, is_low9_or_curly);
    size_t slot = quote_slot(q, curly ? &dq : w, curly ? 1 : wl);
    if (slot == (size_t)-1) return -1;
    if (q->v[slot] % 2) { q->v[slot]++; *prepend = 1; return 0; }
    if (lang == TOK_LANG_EN && wl == 1 && w[0] == '\'' && i > 0 && word_last(d, i - 1) == 's') {
        /* possessive of a word ending in s ("the Jones' house"): left shift, not counted */
        *prepend = 1;
        return 0;
    }
    q->v[slot]++;
    *prepend = 0;
    return was;
}

/* " $text " with @-@ joined and the entities unescaped, into the returned buffer of cur/nxt;
 * NULL when out of memory. */
static tok_cpvec *detok_prepare(tok_cpvec *cur, tok_cpvec *nxt)
{
    nxt->n = 0;
    tok_cv_push(nxt, ' ');
    for (size_t i = 0; i < cur->n; i++) tok_cv_push(nxt, cur->v[i]);
    tok_cv_push(nxt, ' ');
    tok_cpvec *a = nxt, *spare = cur;
    tok_cpvec *r = replace_all(a, spare, " @-@ ", "-");
    if (r != a) { spare = a; a = r; }
    for (size_t k = 0; k < NENT; k++) {
        r = replace_all(a, spare, entities[k][0], entities[k][1]);
        if (r != a) { spare = a; a = r; }
    }
    return a->oom || spare->oom ? NULL : a;
}

/* split(/ /, $text) into b->words: empty fields between spaces are kept, trailing empty ones
 * dropped; -1 when out of memory. */
static int detok_split(const tok_cpvec *text, tok_buf *b, words *d)
{
    b->words.n = 0;
    size_t start = 0;
    for (size_t i = 0; i <= text->n; i++)
        if (i == text->n || text->v[i] == ' ') {
            tok_cv_push(&b->words, (uint32_t)start);
            tok_cv_push(&b->words, (uint32_t)(i - start));
            start = i + 1;
        }
    if (b->words.oom) return -1;
    *d = (words){text->v, b->words.v, b->words.n / 2};
    while (d->n > 0 && word_len(d, d->n - 1) == 0) d->n--;
    return 0;
}

/* s/ +/ /g; s/^ //g; s/ $//g over t, then t as UTF-8 into b */
static int detok_squeeze(tok_cpvec *t, tok_buf *b, nmt_err *err)
{
    uint32_t *o = t->v;
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (o[i] == ' ' && k > 0 && o[k - 1] == ' ') continue;
        o[k++] = o[i];
    }
    size_t s0 = (k > 0 && o[0] == ' ') ? 1 : 0;
    if (k > s0 && o[k - 1] == ' ') k--;
    return tok_encode(b, o + s0, k - s0, err);
}

int detok_line(int lang, const char *in, size_t n, tok_buf *b, nmt_err *err)
{
    if ((!in && n) || !b) return nmt_fail(err, NMT_ERR_ARG, "detok_line: NULL argument");
    if (lang < TOK_LANG_EN || lang > TOK_LANG_DE)
        return nmt_fail(err, NMT_ERR_ARG, "detok_line: unknown language %d", lang);
    if (n > 0 && in[n - 1] == '\n') n--; /* chomp */
    if (n > TOK_MAX_LINE)
        return nmt_fail(err, NMT_ERR_ARG, "detokenize: line of %zu bytes is too long (max %d)", n, TOK_MAX_LINE);
    b->n_invalid = 0;
    tok_cpvec *cur = &b->a, *nxt = &b->b;
    cur->oom = nxt->oom = b->words.oom = 0;
    tok_decode(cur, in, n, &b->n_invalid);
    if (cur->oom) return nmt_fail(err, NMT_ERR_NOMEM, "detokenize: out of memory");

    /* Lines that are empty, all whitespace, or look like one XML/HTML tag (/^<.+>$/) are
     * printed unchanged. */
    int blank = 1;
    for (size_t i = 0; i < cur->n; i++)
        if (!uni_is_space(cur->v[i])) { blank = 0; break; }
    if (blank || (cur->n >= 3 && cur->v[0] == '<' && cur->v[cur->n - 1] == '>'))
        return tok_encode(b, cur->v, cur->n, err);

    tok_cpvec *text = detok_prepare(cur, nxt);
    words d;
    if (!text || detok_split(text, b, &d)) return nmt_fail(err, NMT_ERR_NOMEM, "detokenize: out of memory");
    tok_cpvec *q = text == cur ? nxt : cur; /* quote counters live in the spare buffer */
    q->n = 0;
    tok_cpvec *t = &b->c; /* the detokenized text */
    t->n = 0;
    t->oom = 0;
    int prepend = 1; /* $prependSpace eq " " */
    for (size_t i = 0; i < d.n; i++) {
        int space = join_word(lang, &d, i, q, &prepend);
        if (space < 0) return nmt_fail(err, NMT_ERR_NOMEM, "detokenize: out of memory");
        if (space) tok_cv_push(t, ' ');
        for (size_t k = 0; k < word_len(&d, i); k++) tok_cv_push(t, word(&d, i)[k]);
        if (t->oom) return nmt_fail(err, NMT_ERR_NOMEM, "detokenize: out of memory");
    }
    return detok_squeeze(t, b, err);
}
