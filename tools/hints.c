/* hints.c: the prefixes and constraint phrases of `nmt translate` (hints.h), read line by line in
 * step with the input and passed through the model's target-side text stages (a subword model's
 * phrases become its pieces), then handed to nmt_translate_hints with the batch. A line's
 * strings grow in one buffer, so they are kept as offsets until the batch is translated. */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "hints.h"

#define SLOTS (1 + NMT_MAX_PHRASES) /* a line's offsets: the prefix's, then the phrases' */

int cmd_hints_on(const cmd_hints *h)
{
    return h->prefix_path || h->cons_path || h->in_input;
}

int cmd_hints_open(cmd_hints *h, const nmt_model *m, int cap, nmt_err *err)
{
    if (!cmd_hints_on(h)) return NMT_OK;
    nmt_text_opts o = nmt_text_default_opts();
    int rc = nmt_text_init_model(&h->tgt, &o, m, NMT_TARGET, err);
    if (!rc && h->prefix_path) rc = linereader_init(&h->pf, h->prefix_path, LINEREADER_UTF8, err);
    if (!rc && h->cons_path) rc = linereader_init(&h->cf, h->cons_path, LINEREADER_UTF8, err);
    h->cap = cap;
    h->h = calloc(cap, sizeof *h->h);
    h->mem = calloc(cap, sizeof *h->mem);
    h->used = calloc(cap, sizeof *h->used);
    h->at = calloc((size_t)cap * SLOTS, sizeof *h->at);
    h->ph = calloc((size_t)cap * NMT_MAX_PHRASES, sizeof *h->ph);
    if (!rc && (!h->h || !h->mem || !h->used || !h->at || !h->ph)) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    return rc;
}

/* s[0..len) through the target side's stages, appended to line i's strings: its offset there,
 * or -1 with err set */
static long append_encoded(cmd_hints *h, int i, const char *s, size_t len, nmt_err *err)
{
    nmt_text_line tl;
    if (nmt_text_encode(h->tgt, s, len, &tl, err)) return -1;
    char *m = realloc(h->mem[i], h->used[i] + tl.len + 1);
    if (!m) return nmt_fail(err, NMT_ERR_NOMEM, "out of memory"), -1;
    memcpy(m + h->used[i], tl.text, tl.len);
    m[h->used[i] + tl.len] = 0;
    h->mem[i] = m;
    long at = (long)h->used[i];
    h->used[i] += tl.len + 1;
    return at;
}

/* The tab-separated fields of line i's hints: with pfx the first is its prefix (may be empty),
 * the others are phrases (not blank), unless the one field after the prefix is empty (none).
 * where:lineno names the line in messages. */
static int read_fields(cmd_hints *h, int i, const char *fields, int pfx, const char *where, long lineno, nmt_err *err)
{
    long *at = h->at + (size_t)i * SLOTS;
    for (const char *f = fields; f;) {
        const char *tab = strchr(f, '\t');
        size_t len = tab ? (size_t)(tab - f) : strlen(f);
        int k = h->h[i].n_phrases + 1; /* its slot, when a phrase */
        /* nothing after the prefix's tab: no phrases, as an empty line of a --constraints file
         * (what `paste in starts terms` writes for a line without terms) */
        if (!pfx && k == 1 && !tab && len == 0) break;
        if (!pfx && k > NMT_MAX_PHRASES)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: more than %d constraint phrases", where, lineno, NMT_MAX_PHRASES);
        if (!pfx && strspn(f, " ") >= len)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: constraint phrase %d is empty", where, lineno, k);
        long a = append_encoded(h, i, f, len, err);
        if (a < 0) return err->code;
        if (pfx) {
            at[0] = a;
            pfx = 0;
        } else {
            at[k] = a;
            h->h[i].n_phrases = k;
        }
        f = tab ? tab + 1 : NULL;
    }
    return NMT_OK;
}

/* The next line of the hints file r into *s: NMT_ERR_FORMAT when it ends before the input */
static int file_line(linereader *r, char **s, const char *input, nmt_err *err)
{
    size_t len;
    int got = linereader_next(r, s, &len, err);
    if (got < 0) return got;
    return got ? NMT_OK : nmt_fail(err, NMT_ERR_FORMAT, "%s has %ld lines, fewer than %s", r->name, r->lineno, input);
}

int cmd_hints_line(cmd_hints *h, char *line, size_t *len, const char *name, long lineno, nmt_err *err)
{
    if (!cmd_hints_on(h)) return NMT_OK;
    int i = h->n++, rc = NMT_OK;
    h->h[i] = (nmt_hint){NULL, NULL, 0};
    h->at[(size_t)i * SLOTS] = -1;
    h->used[i] = 0;
    char *s, *tab = h->in_input ? memchr(line, '\t', *len) : NULL;
    if (tab) {
        *tab = 0;
        *len = (size_t)(tab - line);
        rc = read_fields(h, i, tab + 1, 1, name, lineno, err);
    }
    if (!rc && h->prefix_path && !(rc = file_line(&h->pf, &s, name, err)) && *s) {
        long a = append_encoded(h, i, s, strlen(s), err);
        rc = a < 0 ? err->code : NMT_OK;
        h->at[(size_t)i * SLOTS] = a;
    }
    if (!rc && h->cons_path && !(rc = file_line(&h->cf, &s, name, err)) && *s)
        rc = read_fields(h, i, s, 0, h->cons_path, h->cf.lineno, err);
    return rc;
}

int cmd_hints_translate(cmd_hints *h, nmt_decoder *d, const char *const *src, int n, nmt_translation *out,
                        nmt_err *err)
{
    if (!cmd_hints_on(h)) return nmt_translate(d, src, n, out, err);
    for (int i = 0; i < h->n; i++) { /* the buffers have stopped moving: offsets to pointers */
        const long *at = h->at + (size_t)i * SLOTS;
        const char **ph = h->ph + (size_t)i * NMT_MAX_PHRASES;
        for (int k = 0; k < h->h[i].n_phrases; k++) ph[k] = h->mem[i] + at[k + 1];
        h->h[i].prefix = at[0] >= 0 ? h->mem[i] + at[0] : NULL;
        h->h[i].phrases = ph;
    }
    int rc = nmt_translate_hints(d, src, h->h, n, out, err);
    for (int i = 0; i < h->n; i++) {
        free(h->mem[i]);
        h->mem[i] = NULL;
    }
    h->n = 0;
    return rc;
}

/* an error when the hints file r (if open) has a line left */
static int ended(linereader *r, nmt_err *err)
{
    char *s;
    size_t len;
    int got = r->name ? linereader_next(r, &s, &len, err) : 0;
    if (got < 0) return got;
    return got ? nmt_fail(err, NMT_ERR_FORMAT, "%s has more lines than the input", r->name) : NMT_OK;
}

int cmd_hints_end(cmd_hints *h, nmt_err *err)
{
    int rc = ended(&h->pf, err);
    return rc ? rc : ended(&h->cf, err);
}

void cmd_hints_free(cmd_hints *h)
{
    for (int i = 0; h->mem && i < h->cap; i++) free(h->mem[i]);
    free(h->mem);
    free(h->used);
    free(h->at);
    free(h->h);
    free(h->ph);
    linereader_free(&h->pf);
    linereader_free(&h->cf);
    nmt_text_free(h->tgt);
}
