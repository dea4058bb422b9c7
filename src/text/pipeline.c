/* pipeline.c: nmt_text, the text pipeline. Encoding runs, in order, the UTF-8 repair (one U+FFFD
 * per invalid byte), the Moses front end and tokenizer (tokenize.c: lowercase.perl,
 * normalize-punctuation.perl, tokenizer.perl), the word splitter (words.h) and the vocabulary;
 * decoding runs the vocabulary backwards, joins the words with spaces and detokenizes
 * (detokenizer.perl). The object owns every buffer it returns and reuses them line after line. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "nn/model.h"
#include "text/pipeline.h"
#include "text/tokenize.h"
#include "text/unicode.h"
#include "text/words.h"

struct nmt_text {
    nmt_text_opts o;
    tok_opts to;          /* the tokenizer's view of o */
    const vocab *v;       /* what ids index, or NULL */
    vocab *own;           /* v when made here from a word list */
    tok_buf tb;           /* Moses stages: result and scratch */
    char *line;           /* the text stages' result when there is no Moses stage */
    char *split;          /* a copy of the text, cut into words */
    char *joined;         /* decoding: the words joined by spaces */
    const char **words;   /* encoding's words, or decoding's words of ids */
    int *ids;
    size_t line_cap, split_cap, joined_cap, words_cap, ids_cap;
};

/* Makes room for need elements of elem bytes in *p (doubling); -1 when there is no memory. */
static int reserve(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = realloc(*(void **)p, n * elem);
    if (!q) return -1;
    *(void **)p = q;
    *cap = n;
    return 0;
}

nmt_text_opts nmt_text_default_opts(void)
{
    nmt_text_opts o = {NMT_LANG_NONE, 0, 0, 0, 0, 1, 0};
    return o;
}

static int check_opts(const nmt_text_opts *o, nmt_err *err)
{
    if (o->lang < NMT_LANG_NONE || o->lang > NMT_LANG_DE) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: unknown language %d", o->lang);
    if ((o->tokenize || o->detokenize) && o->lang == NMT_LANG_NONE)
        return nmt_fail(err, NMT_ERR_ARG, "text pipeline: tokenizing and detokenizing need a language");
    if ((o->lowercase || o->normalize_punct || o->aggressive) && !o->tokenize)
        return nmt_fail(err, NMT_ERR_ARG, "text pipeline: lowercasing, punctuation normalization and aggressive splitting go with tokenizing");
    return NMT_OK;
}

static int make(nmt_text **out, const nmt_text_opts *o, const vocab *v, nmt_err *err)
{
    *out = NULL;
    int rc = check_opts(o, err);
    if (rc) return rc;
    nmt_text *t = calloc(1, sizeof *t);
    if (!t) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    t->o = *o;
    t->to = tok_opts_default();
    t->to.lang = o->lang;
    t->to.aggressive = o->aggressive;
    t->to.escape = o->escape;
    t->to.lowercase = o->lowercase;
    t->to.normalize = o->normalize_punct;
    t->v = v;
    tok_buf_init(&t->tb);
    *out = t;
    return NMT_OK;
}

int nmt_text_init(nmt_text **out, const nmt_text_opts *o, const char *const *words, int n_words, nmt_err *err)
{
    *out = NULL;
    vocab *v = NULL;
    int rc = words ? vocab_from_words(&v, words, n_words, err) : NMT_OK;
    if (!rc && (rc = make(out, o, v, err)) == NMT_OK) (*out)->own = v;
    else vocab_free(v);
    return rc;
}

int nmt_text_init_model(nmt_text **out, const nmt_text_opts *o, const nmt_model *m, int side, nmt_err *err)
{
    *out = NULL;
    if (!m || (side != NMT_SOURCE && side != NMT_TARGET)) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: no model, or side %d is neither source nor target", side);
    return make(out, o, side == NMT_SOURCE ? m->src : m->tgt, err);
}

void nmt_text_free(nmt_text *t)
{
    if (!t) return;
    vocab_free(t->own);
    tok_buf_free(&t->tb);
    free(t->line);
    free(t->split);
    free(t->joined);
    free(t->words);
    free(t->ids);
    free(t);
}

int text_pipe_has_stages(const nmt_text *t) { return t->o.tokenize != 0; }

/* ------------------------------------------------------------------ encoding */

/* s[0..n) into t->line with each invalid UTF-8 byte replaced by U+FFFD (3 bytes: the copy is at
 * most 3n long); the count replaced, or -1 without memory. */
static int repair(nmt_text *t, const char *s, size_t n)
{
    if (reserve(&t->line, &t->line_cap, 3 * n + 1, 1)) return -1;
    char *p = t->line;
    int bad = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(s + i, n - i, &cp);
        if (k < 0) { memcpy(p, "\xEF\xBF\xBD", 3); p += 3; i++; bad++; }
        else { memcpy(p, s + i, (size_t)k); p += k; i += (size_t)k; }
    }
    *p = 0;
    return bad;
}

int text_pipe_text(nmt_text *t, const char *line, size_t len, const char **out, size_t *out_len, int *n_invalid,
                   nmt_err *err)
{
    len = strnlen(line, len); /* a C string ends at its NUL (the line readers refuse NULs) */
    if (len && line[len - 1] == '\n') len--;
    *n_invalid = 0;
    if (utf8_find_invalid(line, len) >= 0) {
        int bad = repair(t, line, len);
        if (bad < 0) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        *n_invalid = bad;
        line = t->line;
        len = strlen(t->line);
    } else if (!t->o.tokenize) {
        if (reserve(&t->line, &t->line_cap, len + 1, 1)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        memcpy(t->line, line, len);
        t->line[len] = 0;
        line = t->line;
    }
    if (!t->o.tokenize) {
        *out = line;
        *out_len = len;
        return NMT_OK;
    }
    int rc = tok_line(&t->to, line, len, &t->tb, err);
    if (rc) return rc;
    *out = t->tb.s;
    *out_len = t->tb.len;
    return NMT_OK;
}

int text_pipe_ids(const vocab *v, const char *s, int *ids, int cap, int *kept, long *unk)
{
    int n = 0, k = 0;
    size_t len;
    for (const char *w; (w = text_next_word(&s, &len)); n++) {
        if (k == cap) continue;
        ids[k] = vocab_id(v, w, len);
        *unk += ids[k] == VOCAB_UNK;
        k++;
    }
    *kept = k;
    return n;
}

int nmt_text_encode(nmt_text *t, const char *line, size_t len, nmt_text_line *out, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    const char *s;
    size_t n;
    int bad, rc = text_pipe_text(t, line, len, &s, &n, &bad, err);
    if (rc) return rc;
    int nw = text_count_words(s);
    if (reserve(&t->split, &t->split_cap, n + 1, 1) || reserve(&t->words, &t->words_cap, (size_t)nw + 1, sizeof *t->words) ||
        (t->v && reserve(&t->ids, &t->ids_cap, (size_t)nw + 1, sizeof *t->ids)))
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    memcpy(t->split, s, n + 1);
    text_split_words(t->split, (char **)t->words, nw);
    long unk = 0;
    int kept;
    if (t->v) text_pipe_ids(t->v, s, t->ids, nw, &kept, &unk);
    out->text = s;
    out->len = n;
    out->n_words = nw;
    out->words = t->words;
    out->ids = t->v ? t->ids : NULL;
    out->n_unk = (int)unk;
    out->n_invalid = bad;
    return NMT_OK;
}

/* ------------------------------------------------------------------ decoding */

int nmt_text_decode_words(nmt_text *t, const char *const *words, int n, const char **text, size_t *len,
                          nmt_err *err)
{
    size_t need = 1;
    for (int k = 0; k < n; k++) need += strlen(words[k]) + 1;
    if (reserve(&t->joined, &t->joined_cap, need, 1)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    char *p = t->joined;
    for (int k = 0; k < n; k++) {
        size_t l = strlen(words[k]);
        if (k) *p++ = ' ';
        memcpy(p, words[k], l);
        p += l;
    }
    *p = 0;
    *text = t->joined;
    *len = (size_t)(p - t->joined);
    if (!t->o.detokenize) return NMT_OK;
    int rc = detok_line(t->o.lang, t->joined, *len, &t->tb, err);
    if (rc) return rc;
    *text = t->tb.s;
    *len = t->tb.len;
    return NMT_OK;
}

int nmt_text_decode(nmt_text *t, const int *ids, int n, const char **text, size_t *len, nmt_err *err)
{
    if (!t->v) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: decoding ids needs a vocabulary");
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: %d ids", n);
    if (reserve(&t->words, &t->words_cap, (size_t)n + 1, sizeof *t->words)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        if (ids[k] < 0 || ids[k] >= t->v->n)
            return nmt_fail(err, NMT_ERR_ARG, "text pipeline: id %d at position %d is outside the vocabulary (%d words)", ids[k], k, t->v->n);
        t->words[k] = vocab_word(t->v, ids[k]);
    }
    return nmt_text_decode_words(t, t->words, n, text, len, err);
}
