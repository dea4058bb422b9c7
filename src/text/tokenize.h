/* tokenize.h: Moses-compatible tokenization of one line at a time: tokenizer.perl (with -a and
 * -no-escape), detokenizer.perl, and the lowercase.perl | normalize-punctuation.perl front end
 * of the Multi30k ".lc.norm.tok" preprocessing. Output is byte-identical to the Moses scripts
 * of moses-smt/mosesdecoder 3a0631a (Dec 2017) on the reference vectors in
 * shared/data/tokenizer/.
 *
 * Thread safety: the functions read only constant tables; every call works in the tok_buf the
 * caller passes, so threads with their own tok_buf may call them concurrently.
 *
 *     tok_opts o = tok_opts_default();
 *     o.lang = TOK_LANG_FR;
 *     tok_buf b;
 *     tok_buf_init(&b);
 *     if (tok_line(&o, line, len, &b, &err) == NMT_OK) use(b.s, b.len);
 *     tok_buf_free(&b);
 */
#ifndef NMT_TOKENIZE_H
#define NMT_TOKENIZE_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

/* Languages with built-in rules (non-breaking prefixes, apostrophes, French spacing). */
enum tok_lang { TOK_LANG_EN = 0, TOK_LANG_FR = 1, TOK_LANG_DE = 2 };

/* The word's type in the language's non-breaking prefixes (Moses' nonbreaking_prefix.LANG, the
 * word without its period): 0 none, 1 a period after it never ends a sentence, 2 only when a
 * number follows. The sentence splitter reads them too (sentsplit.h). */
int tok_prefix_type(int lang, const char *word);

/* "en", "fr", "de" -> enum tok_lang; -1 when unknown. */
int tok_lang_parse(const char *s);
const char *tok_lang_name(int lang);

typedef struct tok_opts {
    int lang;       /* enum tok_lang (tokenizer.perl -l) */
    int aggressive; /* -a: split hyphens between letters/digits as "a @-@ b" */
    int escape;     /* 1 (default): HTML-escape & | < > ' " [ ]; 0 = -no-escape */
    int lowercase;  /* run lowercase.perl (Perl lc) first */
    int normalize;  /* run normalize-punctuation.perl -l LANG first (after lowercasing) */
} tok_opts;

/* en, not aggressive, escaping on, no lowercasing or normalization (tokenizer.perl -l en). */
tok_opts tok_opts_default(void);

/* A growable array of code points (scratch for the passes; not for callers). */
typedef struct tok_cpvec {
    uint32_t *v;
    size_t n, cap;
    int oom; /* set when a push could not grow the array; the pass result is then invalid */
} tok_cpvec;

/* Output and reusable scratch of the line functions. After a successful call, s[0..len) holds
 * the result (NUL-terminated, without a newline) and n_invalid the number of invalid UTF-8
 * sequences of the input that were replaced by U+FFFD. Zero-initialised or tok_buf_init()ed. */
typedef struct tok_buf {
    char *s;
    size_t len, cap;
    size_t n_invalid;
    tok_cpvec a, b;  /* the two code point buffers that the passes alternate between */
    tok_cpvec c;     /* a third one (the detokenizer's output) */
    tok_cpvec words; /* word boundaries (start, length pairs) */
} tok_buf;

void tok_buf_init(tok_buf *b);
void tok_buf_free(tok_buf *b); /* accepts NULL */

/* The longest line accepted (bytes); the passes index code points with 32-bit offsets and can
 * grow a line about tenfold. */
#define TOK_MAX_LINE (1 << 26)

/* Tokenizes in[0..n) (one line, no newline; a trailing "\n" is ignored as Perl's chomp does)
 * into out. Returns NMT_OK, or NMT_ERR_NOMEM / NMT_ERR_ARG (bad option, line over TOK_MAX_LINE)
 * with a message in err. */
int tok_line(const tok_opts *o, const char *in, size_t n, tok_buf *out, nmt_err *err);

/* Detokenizes one line as detokenizer.perl -l LANG (un-escapes, joins "@-@", attaches
 * punctuation and quotes; French writes a space before ? ! : ; %). */
int detok_line(int lang, const char *in, size_t n, tok_buf *out, nmt_err *err);
/* Only the un-escaping of detok_line, of one word in place (l&apos; -> l'); it never grows. */
void detok_unescape_word(char *word);

/* The two stages of the .lc.norm.tok front end on their own, one line each: Perl lc() (full
 * lowercase mapping, so U+0130 becomes "i\u0307") and normalize-punctuation.perl -l LANG. */
int tok_lowercase_line(const char *in, size_t n, tok_buf *out, nmt_err *err);
int tok_normalize_line(int lang, const char *in, size_t n, tok_buf *out, nmt_err *err);

/* ---- tokbuf.c: shared by tokenize.c, detokenize.c and normalize.c (not for callers) ---- */

/* Decodes in[0..n) into v (replacing invalid sequences by U+FFFD; counts them in *n_invalid). */
void tok_decode(tok_cpvec *v, const char *in, size_t n, size_t *n_invalid);
/* Encodes v[0..n) into out->s as UTF-8; NMT_OK or NMT_ERR_NOMEM. */
int tok_encode(tok_buf *out, const uint32_t *v, size_t n, nmt_err *err);
/* Makes room for need more bytes in out->s; 0 or -1. */
int tok_reserve(tok_buf *out, size_t need);
/* Appends x (growing the array; sets oom on failure). */
void tok_cv_push_slow(tok_cpvec *c, uint32_t x);
static inline void tok_cv_push(tok_cpvec *c, uint32_t x)
{
    if (c->n < c->cap) c->v[c->n++] = x;
    else tok_cv_push_slow(c, x);
}
/* Appends the ASCII string s. */
void tok_cv_push_str(tok_cpvec *c, const char *s);
/* 1 when the ASCII literal lit occurs in v at position i. */
int tok_cv_match(const tok_cpvec *v, size_t i, const char *lit);

#endif
