/* tokbuf.c: the buffers of the Moses stages (tokenize.h): code point vectors, UTF-8 decoding into
 * them with one U+FFFD per broken character, and encoding back. The tokenizer, the detokenizer
 * and the normalizer all use them, and the tokenizer calls the normalizer: here, below the
 * three, so that no two of their files call each other. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "text/tokenize.h"
#include "text/unicode.h"

void tok_buf_init(tok_buf *b) { memset(b, 0, sizeof *b); }

void tok_buf_free(tok_buf *b)
{
    if (!b) return;
    free(b->s);
    free(b->a.v);
    free(b->b.v);
    free(b->c.v);
    free(b->words.v);
    memset(b, 0, sizeof *b);
}

void tok_cv_push_slow(tok_cpvec *c, uint32_t x)
{
    if (c->oom) return;
    size_t cap = c->cap ? c->cap * 2 : 256;
    uint32_t *v = realloc(c->v, cap * sizeof *v);
    if (!v) { c->oom = 1; return; }
    c->v = v;
    c->cap = cap;
    c->v[c->n++] = x;
}

void tok_cv_push_str(tok_cpvec *c, const char *s)
{
    while (*s) tok_cv_push(c, (unsigned char)*s++);
}

int tok_cv_match(const tok_cpvec *v, size_t i, const char *lit)
{
    for (; *lit; lit++, i++)
        if (i >= v->n || v->v[i] != (unsigned char)*lit) return 0;
    return 1;
}

void tok_decode(tok_cpvec *v, const char *in, size_t n, size_t *n_invalid)
{
    v->n = 0;
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)in[i];
        if (c < 0x80) { tok_cv_push(v, c); i++; continue; }
        uint32_t cp;
        int k = utf8_decode(in + i, n - i, &cp);
        if (k < 0) {
            /* one U+FFFD per maximal invalid prefix: skip the lead byte and any continuation
             * bytes that follow it, so one broken character gives one replacement */
            tok_cv_push(v, 0xFFFD);
            (*n_invalid)++;
            i++;
            while (i < n && ((unsigned char)in[i] & 0xC0) == 0x80) i++;
            continue;
        }
        tok_cv_push(v, cp);
        i += (size_t)k;
    }
}

int tok_reserve(tok_buf *out, size_t need)
{
    if (out->len + need + 1 <= out->cap) return 0;
    size_t cap = out->cap ? out->cap : 256;
    while (cap < out->len + need + 1) {
        if (cap > ((size_t)-1) / 2) return -1;
        cap *= 2;
    }
    char *s = realloc(out->s, cap);
    if (!s) return -1;
    out->s = s;
    out->cap = cap;
    return 0;
}

int tok_encode(tok_buf *out, const uint32_t *v, size_t n, nmt_err *err)
{
    out->len = 0;
    if (n > ((size_t)-1) / 4 - 1 || tok_reserve(out, 4 * n))
        return nmt_fail(err, NMT_ERR_NOMEM, "tokenize: out of memory (%zu code points)", n);
    for (size_t i = 0; i < n; i++) {
        int k = utf8_encode(v[i], out->s + out->len);
        if (k == 0) k = utf8_encode(0xFFFD, out->s + out->len);
        out->len += (size_t)k;
    }
    out->s[out->len] = '\0';
    return NMT_OK;
}
