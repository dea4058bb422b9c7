/* links.c: reading Pharaoh word alignments for guided alignment training (links.h). The file is
 * read like a corpus side (text/linereader.h: gzip, UTF-8, a final "\r" dropped), then each line
 * is parsed twice: once to check it and count its links, once to store those of the pairs kept. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "data/links.h"
#include "text/words.h"

/* One "i-j" token of len bytes into *i, *j; -1 when it is not two decimal numbers joined by '-'
 * (or a number passes INT_MAX). */
static int parse_link(const char *w, size_t len, int *i, int *j)
{
    int v[2] = {0, 0}, k = 0;
    size_t digits = 0;
    for (size_t p = 0; p < len; p++) {
        char ch = w[p];
        if (ch == '-' && k == 0 && digits) { k = 1; digits = 0; continue; }
        if (ch < '0' || ch > '9') return -1;
        if (v[k] > (INT_MAX - (ch - '0')) / 10) return -1;
        v[k] = v[k] * 10 + (ch - '0');
        digits++;
    }
    if (k != 1 || !digits) return -1;
    *i = v[0];
    *j = v[1];
    return 0;
}

/* Checks line ln (0-based) of the links file against its corpus line; *count gets its links. */
static int check_line(const textfile *f, long ln, int ns, int nt, long *count, nmt_err *err)
{
    const char *p = f->line[ln], *w;
    size_t len;
    long n = 0;
    while ((w = text_next_word(&p, &len))) {
        int i, j;
        if (parse_link(w, len, &i, &j))
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: malformed link '%.*s': links are i-j, source word i and target word j "
                            "counted from 0", f->path, ln + 1, len > 40 ? 40 : (int)len, w);
        if (i >= ns)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: link %d-%d is past the source's %d words", f->path, ln + 1, i, j, ns);
        if (j >= nt)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: link %d-%d is past the target's %d words", f->path, ln + 1, i, j, nt);
        n++;
    }
    *count = n;
    return NMT_OK;
}

static int cmp_link(const void *a, const void *b)
{
    const int *x = a, *y = b;
    if (x[1] != y[1]) return x[1] < y[1] ? -1 : 1;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The links of line ln into out (2 ints each), sorted by target, then source. */
static void store_line(const textfile *f, long ln, int *out, long n)
{
    const char *p = f->line[ln], *w;
    size_t len;
    long k = 0;
    while ((w = text_next_word(&p, &len))) {
        parse_link(w, len, &out[2 * k], &out[2 * k + 1]); /* checked by check_line */
        k++;
    }
    qsort(out, (size_t)n, 2 * sizeof(int), cmp_link);
}

/* Every line checked; per line counts into cnt [nlines]. */
static int check_all(const textfile *f, const textfile *s, const textfile *t, long *cnt, nmt_err *err)
{
    if (f->nlines != s->nlines)
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s has %ld lines but %s has %ld: guided alignment needs one line of links per "
                        "sentence pair (an empty line for none)", f->path, f->nlines, s->path, s->nlines);
    for (long ln = 0; ln < f->nlines; ln++) {
        int rc = check_line(f, ln, text_count_words(s->line[ln]), text_count_words(t->line[ln]), &cnt[ln], err);
        if (rc) return rc;
    }
    return NMT_OK;
}

int links_attach(pairs *p, const char *path, const textfile *s, const textfile *t, nmt_err *err)
{
    textfile f;
    int rc = textfile_read(&f, path, err);
    if (rc) return rc;
    long *cnt = malloc(sizeof(long) * (size_t)(f.nlines ? f.nlines : 1));
    if (!cnt) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory");
    if (!rc) rc = check_all(&f, s, t, cnt, err);
    long total = 0;
    for (int k = 0; !rc && k < p->n; k++) total += cnt[p->line[k] - 1];
    if (!rc) {
        p->link_off = malloc(sizeof(long) * ((size_t)p->n + 1));
        p->link = malloc(sizeof(int) * 2 * (size_t)(total ? total : 1));
        if (!p->link_off || !p->link) rc = nmt_fail(err, NMT_ERR_NOMEM, "out of memory for %ld links", total);
        else p->link_off[0] = 0;
    }
    for (int k = 0; !rc && k < p->n; k++) { /* the pairs kept, in corpus order */
        long ln = p->line[k] - 1;
        p->link_off[k + 1] = p->link_off[k] + cnt[ln];
        store_line(&f, ln, p->link + 2 * p->link_off[k], cnt[ln]);
    }
    free(cnt);
    textfile_free(&f);
    return rc;
}
