/* hints.c: the prefixes and constraint phrases of `nmt translate` (hints.h), read line by line in
 * step with the input and handed, as target text, to the worker that encodes the line: it passes
 * them through the model's target-side stages (a subword model's phrases become its pieces). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "hints.h"

int cmd_hints_on(const cmd_hints *h)
{
    return h->prefix_path || h->cons_path || h->in_input;
}

int cmd_hints_open(cmd_hints *h, nmt_err *err)
{
    int rc = NMT_OK;
    if (h->prefix_path) rc = linereader_init(&h->pf, h->prefix_path, LINEREADER_UTF8, err);
    if (!rc && h->cons_path) rc = linereader_init(&h->cf, h->cons_path, LINEREADER_UTF8, err);
    return rc;
}

const char *cmd_hints_cut(const cmd_hints *h, char *line, size_t *len)
{
    char *tab = h->in_input ? memchr(line, '\t', *len) : NULL;
    if (!tab) return NULL;
    *tab = 0;
    *len = (size_t)(tab - line);
    return tab + 1;
}

/* a worker's refusal of hint text as where:lineno: message */
static int named(int rc, const char *where, long lineno, nmt_err *err)
{
    if (rc) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err->msg);
        nmt_fail(err, rc, "%s:%ld: %.900s", where, lineno, msg);
    }
    return rc;
}

/* The tab-separated fields of a line's hints into s: with pfx the first is its prefix (may be
 * empty), the others are phrases (not blank), unless the one field after the prefix is empty
 * (none). fields is cut in place; where:lineno names the line in messages. */
static int read_fields(nmt_worker *w, nmt_sentence *s, char *fields, int pfx, const char *where, long lineno,
                       nmt_err *err)
{
    for (char *f = fields; f;) {
        char *tab = strchr(f, '\t');
        if (tab) *tab = 0;
        int k = s->hint.n_phrases + 1; /* its number, when a phrase */
        /* nothing after the prefix's tab: no phrases, as an empty line of a --constraints file
         * (what `paste in starts terms` writes for a line without terms) */
        if (!pfx && k == 1 && !tab && !*f) break;
        if (!pfx && k > NMT_MAX_PHRASES)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: more than %d constraint phrases", where, lineno, NMT_MAX_PHRASES);
        if (!pfx && !f[strspn(f, " ")])
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: constraint phrase %d is empty", where, lineno, k);
        int rc = pfx ? nmt_worker_prefix(w, s, f, err) : nmt_worker_phrase(w, s, f, err);
        if (rc) return named(rc, where, lineno, err);
        pfx = 0;
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

int cmd_hints_line(cmd_hints *h, nmt_worker *w, nmt_sentence *s, const char *fields, const char *name, long lineno,
                   nmt_err *err)
{
    int rc = fields ? read_fields(w, s, (char *)fields, 1, name, lineno, err) : NMT_OK;
    char *line;
    if (!rc && h->prefix_path && !(rc = file_line(&h->pf, &line, name, err)) && *line)
        rc = named(nmt_worker_prefix(w, s, line, err), h->pf.name, h->pf.lineno, err);
    if (!rc && h->cons_path && !(rc = file_line(&h->cf, &line, name, err)) && *line)
        rc = read_fields(w, s, line, 0, h->cons_path, h->cf.lineno, err);
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
    linereader_free(&h->pf);
    linereader_free(&h->cf);
}
