/* pipeline.c: nmt_text, the text pipeline. Encoding runs, in order, the UTF-8 repair (one U+FFFD
 * per invalid byte), the Moses front end and tokenizer (tokenize.c: lowercase.perl,
 * normalize-punctuation.perl, tokenizer.perl), the word splitter (words.h), for a subword model
 * SentencePiece over the words (subword.h), and the vocabulary; decoding runs the vocabulary
 * backwards, joins the tokens (with spaces, or SentencePiece's join) and detokenizes
 * (detokenizer.perl). The object owns every buffer it returns and reuses them line after line. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "data/pipeline.h"
#include "data/subword.h"
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
    char *joined;         /* the words joined by single spaces: decoding's output, a subword line's input to SentencePiece */
    const char **words;   /* encoding's words, or decoding's words of ids */
    int *ids;
    int *word_of;         /* the word of each token (identity without subwords) */
    size_t line_cap, split_cap, joined_cap, words_cap, ids_cap, word_of_cap;
    /* subword pipelines only */
    const subwords *sw;   /* the model's SentencePiece models, or NULL */
    int side;             /* enum nmt_side: which of them */
    spm_seg seg;          /* the line's pieces and their spans */
    char *pieces;         /* encoding: the pieces joined by spaces, the line the model reads */
    char *decoded;        /* decoding: SentencePiece's join of the pieces */
    const char **twords;  /* encoding: the pieces; decoding: the words of the decoded line */
    char *tsplit;         /* a copy of the decoded line, cut into words */
    int *sp_ids;          /* decoding: SentencePiece ids of the tokens */
    size_t pieces_cap, decoded_cap, twords_cap, tsplit_cap, sp_ids_cap;
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

/* sub: a subword pipeline, whose text may be lowercased and normalised without tokenizing
 * (SentencePiece then finds the units). */
static int check_opts(const nmt_text_opts *o, int sub, nmt_err *err)
{
    if (o->lang < NMT_LANG_NONE || o->lang > NMT_LANG_DE) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: unknown language %d", o->lang);
    if ((o->tokenize || o->detokenize || o->normalize_punct) && o->lang == NMT_LANG_NONE)
        return nmt_fail(err, NMT_ERR_ARG, "text pipeline: tokenizing, detokenizing and punctuation normalization need a language");
    if (sub ? o->aggressive && !o->tokenize : (o->lowercase || o->normalize_punct || o->aggressive) && !o->tokenize)
        return nmt_fail(err, NMT_ERR_ARG, "text pipeline: lowercasing, punctuation normalization and aggressive splitting go with tokenizing");
    return NMT_OK;
}

static int make(nmt_text **out, const nmt_text_opts *o, const vocab *v, const subwords *sw, int side, int sub, nmt_err *err)
{
    *out = NULL;
    int rc = check_opts(o, sub, err);
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
    t->sw = sw;
    t->side = side;
    tok_buf_init(&t->tb);
    *out = t;
    return NMT_OK;
}

int nmt_text_init(nmt_text **out, const nmt_text_opts *o, const char *const *words, int n_words, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_text_init", out, o);
    if (bad || (words && n_words > 0 && (bad = nmt_strs_null(err, "nmt_text_init", "words", words, n_words)))) return bad;
    *out = NULL;
    vocab *v = NULL;
    int rc = words ? vocab_from_words(&v, words, n_words, err) : NMT_OK;
    if (!rc && (rc = make(out, o, v, NULL, 0, 0, err)) == NMT_OK) (*out)->own = v;
    else vocab_free(v);
    return rc;
}

int text_stages_same(const nmt_text_opts *a, const nmt_text_opts *b)
{
    return a->tokenize == b->tokenize && a->lang == b->lang && a->lowercase == b->lowercase &&
           a->normalize_punct == b->normalize_punct && a->aggressive == b->aggressive && a->escape == b->escape;
}

/* The options that ask for a side's stages: "--tokenize en --lowercase --normalize-punct" for the
 * source, "--detokenize fr" for the target (the only one of its stages given as an option). */
static const char *stages_opts(const nmt_text_opts *o, int side, char *buf, size_t n)
{
    const char *l = tok_lang_name(o->lang);
    if (side == NMT_TARGET) snprintf(buf, n, "--detokenize %s", l);
    else snprintf(buf, n, "--tokenize %s%s%s", l, o->lowercase ? " --lowercase" : "", o->normalize_punct ? " --normalize-punct" : "");
    return buf;
}

/* A word model trained on raw text reads raw text through the stages stored in it, and its target
 * side detokenizes. Options that say the same are accepted (a script written before the model
 * stored them goes on working); any other would feed it text unlike its corpus, words it would
 * read as <unk>: refused. */
static int init_raw_words(nmt_text **out, const nmt_text_opts *o, const nmt_text_opts *stored, const vocab *v, int side,
                          nmt_err *err)
{
    nmt_text_opts s = *stored;
    s.detokenize = s.tokenize && side == NMT_TARGET;
    int enc = o->tokenize || o->lowercase || o->normalize_punct || o->aggressive;
    int same = (!enc || text_stages_same(o, &s)) && (!o->detokenize || (s.detokenize && o->lang == s.lang));
    if (!same) {
        char buf[96];
        return nmt_fail(err, NMT_ERR_ARG, "this word model was trained on raw text and applies its own text stages: leave the "
                        "text options out, or give the same (%s side: %s)", side == NMT_SOURCE ? "source" : "target",
                        stages_opts(&s, side, buf, sizeof buf));
    }
    return make(out, &s, v, NULL, 0, 0, err);
}

int text_pipe_init_side(nmt_text **out, const nmt_text_opts *o, const vocab *v, const subwords *sw,
                        const nmt_text_opts *stored, int side, nmt_err *err)
{
    *out = NULL;
    if (stored && !sw) return init_raw_words(out, o, stored, v, side, err);
    if (!sw) return make(out, o, v, NULL, 0, 0, err);
    /* a subword model reads raw text: its stages are the ones its data went through */
    if (o->tokenize || o->lowercase || o->normalize_punct || o->aggressive || o->detokenize)
        return nmt_fail(err, NMT_ERR_ARG, "a subword model reads raw text and writes raw text: its text stages are stored in "
                        "it (leave tokenizing, lowercasing, punctuation normalization and detokenizing to it)");
    return text_pipe_init_subwords(out, sw, side, v, 1, err);
}

int text_pipe_init_subwords(nmt_text **out, const subwords *sw, int side, const vocab *v, int stages, nmt_err *err)
{
    nmt_text_opts o = nmt_text_default_opts();
    if (stages) {
        o = sw->text[side];
        o.detokenize = o.tokenize && side == NMT_TARGET;
    }
    return make(out, &o, v, sw, side, 1, err);
}

int text_pipe_init_stages(nmt_text **out, const nmt_text_opts *o, nmt_err *err)
{
    return make(out, o, NULL, NULL, 0, 1, err);
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
    free(t->word_of);
    spm_seg_free(&t->seg);
    free(t->pieces);
    free(t->decoded);
    free(t->twords);
    free(t->tsplit);
    free(t->sp_ids);
    free(t);
}

int text_pipe_has_stages(const nmt_text *t) { return t->o.tokenize || t->o.lowercase || t->o.normalize_punct || t->sw; }

int text_pipe_tokenizes(const nmt_text *t) { return t->o.tokenize; }

const char *text_tokenized_mark(const char *line, size_t len)
{
    static const char *const marks[] = {"&apos;", "&quot;", " @-@ "};
    for (size_t k = 0; k < sizeof marks / sizeof *marks; k++)
        if (memmem(line, len, marks[k], strlen(marks[k]))) return marks[k];
    return NULL;
}

const char *nmt_text_looks_tokenized(const nmt_text *t, const char *line, size_t len)
{
    return t && line && text_pipe_tokenizes(t) ? text_tokenized_mark(line, len) : NULL;
}

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

/* The Moses front end without the tokenizer (subword pipelines: SentencePiece finds the
 * units): lowercase.perl, then normalize-punctuation.perl, each as tok_line runs them. */
static int front(nmt_text *t, const char *line, size_t len, const char **out, size_t *out_len, nmt_err *err)
{
    int rc = NMT_OK;
    if (t->o.lowercase && !(rc = tok_lowercase_line(line, len, &t->tb, err))) {
        /* the next stage writes t->tb.s: it reads a copy */
        if (reserve(&t->line, &t->line_cap, t->tb.len + 1, 1)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
        memcpy(t->line, t->tb.s, t->tb.len + 1);
        line = t->line;
        len = t->tb.len;
    }
    if (!rc && t->o.normalize_punct) rc = tok_normalize_line(t->o.lang, line, len, &t->tb, err);
    *out = t->o.normalize_punct ? t->tb.s : line;
    *out_len = t->o.normalize_punct ? t->tb.len : len;
    return rc;
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
    if (!t->o.tokenize && (t->o.lowercase || t->o.normalize_punct)) return front(t, line, len, out, out_len, err);
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

/* words[0..n) joined by one space each into t->joined (*len bytes); -1 without memory. */
static int join(nmt_text *t, const char *const *words, int n, size_t *len)
{
    size_t need = 1;
    for (int k = 0; k < n; k++) need += strlen(words[k]) + 1;
    if (reserve(&t->joined, &t->joined_cap, need, 1)) return -1;
    char *p = t->joined;
    for (int k = 0; k < n; k++) {
        size_t l = strlen(words[k]);
        if (k) *p++ = ' ';
        memcpy(p, words[k], l);
        p += l;
    }
    *p = 0;
    *len = (size_t)(p - t->joined);
    return 0;
}

/* t->word_of as the identity over n tokens (a word model's tokens are its words). */
static int identity_words(nmt_text *t, int n)
{
    if (reserve(&t->word_of, &t->word_of_cap, (size_t)n + 1, sizeof *t->word_of)) return -1;
    for (int k = 0; k < n; k++) t->word_of[k] = k;
    return 0;
}

/* SentencePiece's memory grows with a word's length (a 4 MB word took 0.95 GB), and no command
 * reads more than NMT_MAX_SRC_WORDS pieces, which cover at most 400 x 16 characters of 4 bytes
 * (its longest piece is 16 characters) = 25,600 bytes: a line is cut, at a space where there is
 * one, to this many bytes before it is segmented. */
#define SPM_MAX_BYTES 32768

static size_t spm_cut(const char *s, size_t len)
{
    if (len <= SPM_MAX_BYTES) return len;
    size_t cut = SPM_MAX_BYTES;
    while (cut > 0 && s[cut] != ' ') cut--;
    if (cut > 0) return cut;
    for (cut = SPM_MAX_BYTES; cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80; cut--) {} /* a character's start */
    return cut;
}

/* U+2581 is SentencePiece's mark for a space: in the input it would read as one, so that a word
 * of nothing else vanished and "a\u2581dog" came back as "a dog". It becomes '_' (docs/SUBWORDS.md),
 * in place: s only shrinks. */
static void no_space_marks(char *s)
{
    char *w = s;
    for (const char *r = s; *r;) {
        if (r[0] == '\xE2' && r[1] == '\x96' && r[2] == '\x81') { *w++ = '_'; r += 3; }
        else *w++ = *r++;
    }
    *w = 0;
}

/* A subword pipeline's tokens: SentencePiece over the nw words joined by single spaces (so that
 * it sees the words the splitter found), each piece with its id and its word. */
static int segment(nmt_text *t, int nw, nmt_text_line *out, nmt_err *err)
{
    const spm *sp = t->sw->sp[t->side];
    const int *to_vocab = t->sw->to_vocab[t->side];
    size_t jlen, need = 1;
    if (join(t, t->words, nw, &jlen)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    jlen = spm_cut(t->joined, jlen);
    t->joined[jlen] = 0;
    int rc = spm_encode(sp, t->joined, jlen, &t->seg, err);
    if (rc) return rc;
    int n = t->seg.n, unk = 0;
    for (int k = 0; k < n; k++) need += strlen(spm_piece(sp, t->seg.id[k])) + 1;
    if (reserve(&t->ids, &t->ids_cap, (size_t)n + 1, sizeof *t->ids) ||
        reserve(&t->word_of, &t->word_of_cap, (size_t)n + 1, sizeof *t->word_of) ||
        reserve(&t->twords, &t->twords_cap, (size_t)n + 1, sizeof *t->twords) ||
        reserve(&t->pieces, &t->pieces_cap, need + strlen(VOCAB_UNK_STR) * (size_t)n, 1))
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    char *p = t->pieces;
    for (int k = 0; k < n; k++) {
        int id = to_vocab[t->seg.id[k]];
        if (id < 0) id = VOCAB_UNK; /* a control symbol: never a token of the model */
        unk += id == VOCAB_UNK;
        t->ids[k] = id;
        const char *piece = id == VOCAB_UNK ? VOCAB_UNK_STR : spm_piece(sp, t->seg.id[k]);
        size_t l = strlen(piece);
        t->twords[k] = piece; /* the tokens point into the SentencePiece model, the line is a copy */
        if (k) *p++ = ' ';
        memcpy(p, piece, l);
        p += l;
    }
    *p = 0;
    subword_word_of(t->joined, jlen, t->seg.begin, t->seg.end, n, t->word_of);
    out->text = t->pieces;
    out->len = (size_t)(p - t->pieces);
    out->n_words = n;
    out->words = t->twords;
    out->ids = t->ids;
    out->n_unk = unk;
    return NMT_OK;
}
int nmt_text_encode(nmt_text *t, const char *line, size_t len, nmt_text_line *out, nmt_err *err)
{
    int null = NMT_ARGS(err, "nmt_text_encode", t, line, out);
    if (null) return null;
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
    if (t->sw) no_space_marks(t->split);
    text_split_words(t->split, (char **)t->words, nw);
    out->n_text_words = nw;
    out->text_words = t->words;
    out->n_invalid = bad;
    if (t->sw) {
        int rc2 = segment(t, nw, out, err);
        out->word_of = t->word_of; /* after segment, which may move it */
        return rc2;
    }
    if (identity_words(t, nw)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    long unk = 0;
    int kept;
    if (t->v) text_pipe_ids(t->v, s, t->ids, nw, &kept, &unk);
    out->text = s;
    out->len = n;
    out->n_words = nw;
    out->words = t->words;
    out->ids = t->v ? t->ids : NULL;
    out->n_unk = (int)unk;
    out->word_of = t->word_of;
    return NMT_OK;
}

int text_pipe_line(nmt_text *t, const char *line, size_t len, const char **out, size_t *out_len, int *n_invalid,
                   nmt_err *err)
{
    if (!t->sw) return text_pipe_text(t, line, len, out, out_len, n_invalid, err);
    nmt_text_line l;
    int rc = nmt_text_encode(t, line, len, &l, err);
    *out = l.text;
    *out_len = l.len;
    *n_invalid = l.n_invalid;
    return rc;
}

/* ------------------------------------------------------------------ decoding */

/* A subword pipeline's decoding: the tokens' SentencePiece ids (a word outside the vocabulary,
 * say a copied source word, as UNK) joined by SentencePiece, the words of the result and the word
 * of each token. */
static int join_pieces(nmt_text *t, const char *const *words, int n, nmt_text_line *out, nmt_err *err)
{
    const int *to_spm = t->sw->to_spm[t->side];
    if (!t->v) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: decoding pieces needs a vocabulary");
    if (reserve(&t->sp_ids, &t->sp_ids_cap, (size_t)n + 1, sizeof *t->sp_ids)) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++) {
        int id = vocab_find(t->v, words[k], strlen(words[k]));
        t->sp_ids[k] = to_spm[id > VOCAB_EOS ? id : VOCAB_UNK];
    }
    size_t len;
    int rc = spm_decode(t->sw->sp[t->side], t->sp_ids, n, &t->decoded, &t->decoded_cap, &len, &t->seg, err);
    if (rc) return rc;
    int nw = text_count_words(t->decoded);
    if (reserve(&t->tsplit, &t->tsplit_cap, len + 1, 1) || reserve(&t->twords, &t->twords_cap, (size_t)nw + 1, sizeof *t->twords) ||
        reserve(&t->word_of, &t->word_of_cap, (size_t)n + 1, sizeof *t->word_of))
        return nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    memcpy(t->tsplit, t->decoded, len + 1);
    text_split_words(t->tsplit, (char **)t->twords, nw);
    for (int k = 0; k < n; k++) t->word_of[k] = -1;
    subword_word_of(t->decoded, len, t->seg.begin, t->seg.end, t->seg.n < n ? t->seg.n : n, t->word_of);
    out->text = t->decoded;
    out->len = len;
    out->n_text_words = nw;
    out->text_words = t->twords;
    return NMT_OK;
}

int nmt_text_decode_line(nmt_text *t, const char *const *words, int n, nmt_text_line *out, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_text_decode_line", t, words, out);
    if (bad || (n > 0 && (bad = nmt_strs_null(err, "nmt_text_decode_line", "words", words, n)))) return bad;
    memset(out, 0, sizeof *out);
    if (n < 0) return nmt_fail(err, NMT_ERR_ARG, "text pipeline: %d tokens", n);
    out->n_words = n;
    out->words = words;
    int rc = NMT_OK;
    if (t->sw) {
        rc = join_pieces(t, words, n, out, err);
    } else if (join(t, words, n, &out->len) || identity_words(t, n)) {
        rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    } else {
        out->text = t->joined;
        out->n_text_words = n;
        out->text_words = words;
    }
    out->word_of = t->word_of;
    if (rc || !t->o.detokenize) return rc;
    if ((rc = detok_line(t->o.lang, out->text, out->len, &t->tb, err))) return rc;
    out->text = t->tb.s;
    out->len = t->tb.len;
    return NMT_OK;
}

int nmt_text_decode_words(nmt_text *t, const char *const *words, int n, const char **text, size_t *len,
                          nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_text_decode_words", text, len);
    if (bad) return bad;
    nmt_text_line l;
    int rc = nmt_text_decode_line(t, words, n, &l, err);
    *text = l.text;
    *len = l.len;
    return rc;
}

int nmt_text_decode(nmt_text *t, const int *ids, int n, const char **text, size_t *len, nmt_err *err)
{
    int bad = NMT_ARGS(err, "nmt_text_decode", t, ids, text, len);
    if (bad) return bad;
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
