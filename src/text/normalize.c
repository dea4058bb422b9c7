/* normalize.c: the front end of the Multi30k ".lc.norm.tok" preprocessing, re-implemented from
 * the Moses scripts: lowercase.perl (Perl lc on characters) and normalize-punctuation.perl -l L
 * (quotes, dashes, ellipses, French guillemets, non-breaking spaces, quote/comma order).
 *
 * normalize-punctuation.perl has no binmode and no "use utf8": it rewrites the UTF-8 *bytes*
 * of each line, so \d is [0-9] and "\s" is ASCII whitespace. We do the same on bytes (held one
 * per element in the tok_cpvec scratch arrays). The line is processed with its "\n" as Perl's
 * while(<STDIN>) sees it; that matters for s/(\.+)\"(\s*[^<])/: a '."' at the very end of a
 * line is still swapped to '".' because [^<] matches the newline. */
#include <string.h>

#include "base/err.h"
#include "text/tokenize.h"
#include "text/unicode.h"

#define NBSP "\xC2\xA0"

struct nz {
    tok_cpvec *cur, *nxt;
};

static void nz_swap(struct nz *z)
{
    tok_cpvec *t = z->cur;
    z->cur = z->nxt;
    z->nxt = t;
}

static int at(const tok_cpvec *v, size_t i, const char *lit)
{
    size_t k = 0;
    for (; lit[k]; k++)
        if (i + k >= v->n || v->v[i + k] != (unsigned char)lit[k]) return 0;
    return 1;
}

/* s/FROM/TO/g for byte literals. */
static void rep(struct nz *z, const char *from, const char *to)
{
    const tok_cpvec *s = z->cur;
    size_t fl = strlen(from);
    size_t i = 0;
    while (i < s->n && !at(s, i, from)) i++;
    if (i == s->n) return; /* no occurrence: leave the buffers as they are */
    tok_cpvec *d = z->nxt;
    d->n = 0;
    for (size_t k = 0; k < i; k++) tok_cv_push(d, s->v[k]);
    while (i < s->n) {
        if (s->v[i] == (unsigned char)from[0] && at(s, i, from)) {
            for (const char *t = to; *t; t++) tok_cv_push(d, (unsigned char)*t);
            i += fl;
        } else {
            tok_cv_push(d, s->v[i++]);
        }
    }
    nz_swap(z);
}

/* s/ +/ /g */
static void squeeze(struct nz *z)
{
    tok_cpvec *s = z->cur;
    size_t o = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i] == ' ' && o > 0 && s->v[o - 1] == ' ') continue;
        s->v[o++] = s->v[i];
    }
    s->n = o;
}

static int is_digit(uint32_t b) { return b >= '0' && b <= '9'; }
static int is_ascii_letter(uint32_t b) { return (b | 0x20) >= 'a' && (b | 0x20) <= 'z'; }
/* Perl's \s on a byte string: space, \t \n \v \f \r */
static int is_byte_space(uint32_t b) { return b == ' ' || (b >= 9 && b <= 13); }

/* A three-part rule s/(X)MID(Y)/.../g where X and Y are single bytes tested by fx and fy;
 * MID is replaced by repl (which may be empty), X and Y are kept. */
static void rule3(struct nz *z, int (*fx)(uint32_t), const char *mid, int (*fy)(uint32_t), const char *repl)
{
    const tok_cpvec *s = z->cur;
    tok_cpvec *d = z->nxt;
    size_t ml = strlen(mid);
    d->n = 0;
    int changed = 0;
    size_t i = 0;
    while (i < s->n) {
        if (fx(s->v[i]) && at(s, i + 1, mid) && i + 1 + ml < s->n && fy(s->v[i + 1 + ml])) {
            tok_cv_push(d, s->v[i]);
            for (const char *t = repl; *t; t++) tok_cv_push(d, (unsigned char)*t);
            tok_cv_push(d, s->v[i + 1 + ml]);
            i += ml + 2;
            changed = 1;
        } else {
            tok_cv_push(d, s->v[i++]);
        }
    }
    if (changed) nz_swap(z);
}

static int is_rparen(uint32_t b) { return b == ')'; }
static int is_close_punct(uint32_t b) { return b && strchr(".!:?;,", (int)b) != NULL; }
static int is_percent(uint32_t b) { return b == '%'; }

/* s/\"([,\.]+)/$1\"/g (English "quotation," style) */
static void quote_comma_en(struct nz *z)
{
    const tok_cpvec *s = z->cur;
    tok_cpvec *d = z->nxt;
    d->n = 0;
    size_t i = 0;
    while (i < s->n) {
        if (s->v[i] == '"' && i + 1 < s->n && (s->v[i + 1] == ',' || s->v[i + 1] == '.')) {
            size_t j = i + 1;
            while (j < s->n && (s->v[j] == ',' || s->v[j] == '.')) j++;
            for (size_t k = i + 1; k < j; k++) tok_cv_push(d, s->v[k]);
            tok_cv_push(d, '"');
            i = j;
        } else {
            tok_cv_push(d, s->v[i++]);
        }
    }
    nz_swap(z);
}

/* s/(\.+)\"(\s*[^<])/\"$1$2/g: a run of periods before a quote moves behind it, when the quote
 * is followed by (optional whitespace and) something other than '<'. */
static void dots_quote(struct nz *z)
{
    const tok_cpvec *s = z->cur;
    tok_cpvec *d = z->nxt;
    d->n = 0;
    size_t i = 0, n = s->n;
    while (i < n) {
        if (s->v[i] == '.') {
            size_t j = i;
            while (j < n && s->v[j] == '.') j++;
            if (j < n && s->v[j] == '"') {
                size_t r = j + 1, r2 = r;
                while (r2 < n && is_byte_space(s->v[r2])) r2++;
                size_t end = 0;
                if (r2 < n && s->v[r2] != '<') end = r2 + 1; /* \s* then [^<] */
                else if (r2 > r) end = r2;                  /* backtrack: [^<] takes a space */
                if (end) {
                    tok_cv_push(d, '"');
                    for (size_t k = i; k < j; k++) tok_cv_push(d, '.');
                    for (size_t k = j + 1; k < end; k++) tok_cv_push(d, s->v[k]);
                    i = end;
                    continue;
                }
            }
            /* no match starting at any period of this run: copy it */
            for (size_t k = i; k < j; k++) tok_cv_push(d, '.');
            i = j;
        } else {
            tok_cv_push(d, s->v[i++]);
        }
    }
    nz_swap(z);
}

int tok_normalize_line(int lang, const char *in, size_t n, tok_buf *out, nmt_err *err)
{
    if (!in && n) return nmt_fail(err, NMT_ERR_ARG, "tok_normalize_line: NULL input");
    struct nz z = {&out->a, &out->b};
    z.cur->oom = z.nxt->oom = 0;
    z.cur->n = 0;
    for (size_t i = 0; i < n; i++) tok_cv_push(z.cur, (unsigned char)in[i]);
    if (n == 0 || in[n - 1] != '\n') tok_cv_push(z.cur, '\n'); /* the line as <STDIN> reads it */

    rep(&z, "\r", "");
    /* remove extra spaces */
    rep(&z, "(", " (");
    rep(&z, ")", ") ");
    squeeze(&z);
    rule3(&z, is_rparen, " ", is_close_punct, "");
    rep(&z, "( ", "(");
    rep(&z, " )", ")");
    rule3(&z, is_digit, " ", is_percent, "");
    rep(&z, " :", ":");
    rep(&z, " ;", ";");
    /* normalize unicode punctuation (the non -penn branch first) */
    rep(&z, "`", "'");
    rep(&z, "''", " \" ");
    rep(&z, "\xE2\x80\x9E", "\"");  /* U+201E */
    rep(&z, "\xE2\x80\x9C", "\"");  /* U+201C */
    rep(&z, "\xE2\x80\x9D", "\"");  /* U+201D */
    rep(&z, "\xE2\x80\x93", "-");   /* U+2013 en dash */
    rep(&z, "\xE2\x80\x94", " - "); /* U+2014 em dash */
    squeeze(&z);
    rep(&z, "\xC2\xB4", "'");        /* U+00B4 acute accent */
    rule3(&z, is_ascii_letter, "\xE2\x80\x98", is_ascii_letter, "'"); /* U+2018 inside a word */
    rule3(&z, is_ascii_letter, "\xE2\x80\x99", is_ascii_letter, "'"); /* U+2019 inside a word */
    /* U+2018 and U+201A become ' in the script version with -penn (older ones wrote "); the
     * reference vectors contain neither, so this one choice is not checked by them */
    rep(&z, "\xE2\x80\x98", "'");   /* U+2018 */
    rep(&z, "\xE2\x80\x9A", "'");   /* U+201A */
    rep(&z, "\xE2\x80\x99", "\"");  /* U+2019 */
    rep(&z, "''", "\"");
    rep(&z, "\xC2\xB4\xC2\xB4", "\"");
    rep(&z, "\xE2\x80\xA6", "..."); /* U+2026 */
    /* French quotes */
    rep(&z, NBSP "\xC2\xAB" NBSP, " \"");
    rep(&z, "\xC2\xAB" NBSP, "\"");
    rep(&z, "\xC2\xAB", "\"");
    rep(&z, NBSP "\xC2\xBB" NBSP, "\" ");
    rep(&z, NBSP "\xC2\xBB", "\"");
    rep(&z, "\xC2\xBB", "\"");
    /* handle pseudo-spaces */
    rep(&z, NBSP "%", "%");
    rep(&z, "n\xC2\xBA" NBSP, "n\xC2\xBA ");
    rep(&z, NBSP ":", ":");
    rep(&z, NBSP "\xC2\xBA" "C", " \xC2\xBA" "C");
    rep(&z, NBSP "cm", " cm");
    rep(&z, NBSP "?", "?");
    rep(&z, NBSP "!", "!");
    rep(&z, NBSP ";", ";");
    rep(&z, "," NBSP, ", ");
    squeeze(&z);
    if (lang == TOK_LANG_EN) {
        quote_comma_en(&z); /* English "quotation," followed by comma style */
    } else {
        rep(&z, ",\"", "\",");
        dots_quote(&z); /* German/French "quotation", followed by comma style */
    }
    /* a non-breaking space between digits is a thousands separator */
    rule3(&z, is_digit, NBSP, is_digit, lang == TOK_LANG_EN ? "." : ",");
    if (z.cur->oom || z.nxt->oom) return nmt_fail(err, NMT_ERR_NOMEM, "normalize: out of memory");

    tok_cpvec *r = z.cur;
    if (r->n > 0 && r->v[r->n - 1] == '\n') r->n--;
    out->len = 0;
    if (tok_reserve(out, r->n)) return nmt_fail(err, NMT_ERR_NOMEM, "normalize: out of memory");
    for (size_t i = 0; i < r->n; i++) out->s[i] = (char)r->v[i];
    out->len = r->n;
    out->s[out->len] = '\0';
    return NMT_OK;
}

int tok_lowercase_line(const char *in, size_t n, tok_buf *out, nmt_err *err)
{
    if (!in && n) return nmt_fail(err, NMT_ERR_ARG, "tok_lowercase_line: NULL input");
    tok_cpvec *v = &out->a;
    v->oom = 0;
    out->n_invalid = 0;
    tok_decode(v, in, n, &out->n_invalid);
    tok_cpvec *d = &out->b;
    d->oom = 0;
    d->n = 0;
    for (size_t i = 0; i < v->n; i++) {
        /* Perl's lc uses the full mapping: the only one-to-many lowercase is U+0130 */
        if (v->v[i] == 0x130) {
            tok_cv_push(d, 'i');
            tok_cv_push(d, 0x307);
        } else {
            tok_cv_push(d, uni_tolower(v->v[i]));
        }
    }
    if (v->oom || d->oom) return nmt_fail(err, NMT_ERR_NOMEM, "lowercase: out of memory");
    return tok_encode(out, d->v, d->n, err);
}
