/* alignio.c: strict readers for alignment evaluation: gold links in every format of
 * data/alignment/ (converted .talp/.sure/.possible, awesome-align .gold, ALIBI ali_w2w, NAACL
 * .wa), Pharaoh test alignments, soft attention matrices, and tokenized sentences for lengths.
 * Formats are described in aer.h; every error names the file and the line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/aer.h"
#include "base/err.h"
#include "text/linereader.h"
#include "text/words.h"

/* A NAACL sentence number above this is taken for a typo: it would make us allocate for
 * millions of empty sentences. */
#define MAX_SENT 10000000L
/* The largest index or count a file may write, so that i + base, Tx * Ty and the like stay far
 * from overflowing an int. */
#define MAX_INDEX 10000000L

/* ---- small helpers ---------------------------------------------------------------------- */

/* Makes room for `need` elements of `elem` bytes, doubling; -1 on overflow or no memory. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2) return -1;
        n *= 2;
    }
    if (n > SIZE_MAX / elem) return -1;
    void *q = realloc(*p, n * elem);
    if (!q) return -1;
    *p = q;
    *cap = n;
    return 0;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* The next field of s[*pos..len), fields being separated by runs of spaces or tabs (leading
 * and trailing ones are allowed: the ALIBI and MGIZA files end their lines with a space). */
static int next_field(const char *s, size_t len, size_t *pos, const char **f, size_t *flen)
{
    size_t k = *pos;
    while (k < len && is_blank(s[k])) k++;
    if (k == len) { *pos = k; return 0; }
    size_t e = k;
    while (e < len && !is_blank(s[e])) e++;
    *f = s + k;
    *flen = e - k;
    *pos = e;
    return 1;
}

/* A whole field of decimal digits (no sign, no space): 0; -1 if it is not; -2 if too large. */
static int to_index(const char *p, size_t n, int *out)
{
    if (n == 0) return -1;
    long v = 0;
    for (size_t k = 0; k < n; k++) {
        if (!is_digit(p[k])) return -1;
        v = v * 10 + (p[k] - '0');
        if (v > MAX_INDEX) return -2;
    }
    *out = (int)v;
    return 0;
}

/* "x<sep>y" with sep '-' (sure) or `poss` (possible; 0 = none allowed): 0, -1 or -2 as above. */
static int parse_pair(const char *t, size_t n, char poss, int *x, int *y, int *sure)
{
    size_t k = 0;
    while (k < n && is_digit(t[k])) k++;
    if (k == 0 || k == n) return -1;
    if (t[k] == '-') *sure = 1;
    else if (poss && t[k] == poss) *sure = 0;
    else return -1;
    int rx = to_index(t, k, x);
    int ry = to_index(t + k + 1, n - k - 1, y);
    if (rx == -1 || ry == -1) return -1;
    return rx || ry ? -2 : 0;
}

/* Fields are quoted in messages, cut to a readable length. */
#define QUOTE(f, n) (int)((n) > 40 ? 40 : (n)), (f)

static int nomem(nmt_err *err, const char *path)
{
    return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", path);
}

/* ---- building an aer_align -------------------------------------------------------------- */

/* Links are collected with their sentence, then sorted and grouped once at the end, so that a
 * NAACL file may list its sentences in any order. */
typedef struct rec {
    size_t sent;
    aer_link l;
} rec;

typedef struct builder {
    rec *r;
    size_t n, cap;
    long *line;      /* per sentence, for line-per-sentence formats (NULL for NAACL) */
    size_t n_sent, line_cap;
} builder;

static int b_add(builder *b, size_t sent, int i, int j, int sure, long line)
{
    if (grow((void **)&b->r, &b->cap, b->n + 1, sizeof *b->r)) return -1;
    b->r[b->n++] = (rec){sent, {i, j, sure, line}};
    return 0;
}

/* Starts the next sentence of a line-per-sentence file. */
static int b_sentence(builder *b, long line)
{
    if (grow((void **)&b->line, &b->line_cap, b->n_sent + 1, sizeof *b->line)) return -1;
    b->line[b->n_sent++] = line;
    return 0;
}

static void b_free(builder *b)
{
    free(b->r);
    free(b->line);
    memset(b, 0, sizeof *b);
}

static int rec_cmp(const void *pa, const void *pb)
{
    const rec *a = pa, *b = pb;
    if (a->sent != b->sent) return a->sent < b->sent ? -1 : 1;
    if (a->l.i != b->l.i) return a->l.i < b->l.i ? -1 : 1;
    if (a->l.j != b->l.j) return a->l.j < b->l.j ? -1 : 1;
    /* Ties (duplicates) in file order, sure first, so that the message is always the same. */
    if (a->l.line != b->l.line) return a->l.line < b->l.line ? -1 : 1;
    return b->l.sure - a->l.sure;
}

/* Sorts, rejects duplicates and fills out (whose path, format, base and swapped are set). */
static int b_finish(builder *b, aer_align *out, long n_lines, nmt_err *err)
{
    out->n_lines = n_lines;
    if (b->n) qsort(b->r, b->n, sizeof *b->r, rec_cmp);
    for (size_t k = 1; k < b->n; k++) {
        const rec *p = &b->r[k - 1], *q = &b->r[k];
        if (p->sent == q->sent && p->l.i == q->l.i && p->l.j == q->l.j) {
            char t[64];
            aer_link_text(t, sizeof t, out, &q->l);
            if (p->l.line == q->l.line)
                return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: link %s listed twice", out->path,
                                q->l.line, t);
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: link %s of sentence %zu listed twice "
                            "(also on line %ld)", out->path, q->l.line, t, q->sent + 1, p->l.line);
        }
    }
    out->n_sent = b->n_sent;
    out->off = calloc(b->n_sent + 1, sizeof *out->off);
    out->line = calloc(b->n_sent ? b->n_sent : 1, sizeof *out->line);
    out->links = malloc((b->n ? b->n : 1) * sizeof *out->links);
    if (!out->off || !out->line || !out->links) return nomem(err, out->path);
    for (size_t k = 0; k < b->n; k++) {
        const rec *q = &b->r[k];
        out->links[k] = q->l;
        out->off[q->sent + 1]++;
        /* NAACL: a sentence is where its first link is. */
        if (!b->line && (!out->line[q->sent] || q->l.line < out->line[q->sent]))
            out->line[q->sent] = q->l.line;
    }
    for (size_t s = 0; s < b->n_sent; s++) out->off[s + 1] += out->off[s];
    if (b->line) memcpy(out->line, b->line, b->n_sent * sizeof *b->line);
    return 0;
}

/* ---- gold and test readers -------------------------------------------------------------- */

/* One line of an alignment file into the builder: 0, or an error code with its message. */
typedef int (*line_fn)(aer_align *out, builder *b, char *s, size_t len, long lineno, nmt_err *err);

/* out->path read line by line through fn; out is then built from what fn added. */
static int read_lines(aer_align *out, line_fn fn, nmt_err *err)
{
    linereader rd;
    builder b = {0};
    char *s;
    size_t len;
    int rc = linereader_init(&rd, out->path, 0, err);
    while (rc == 0 && (rc = linereader_next(&rd, &s, &len, err)) == 1) rc = fn(out, &b, s, len, rd.lineno, err);
    if (rc == 0) rc = b_finish(&b, out, rd.lineno, err);
    linereader_free(&rd);
    b_free(&b);
    return rc;
}

/* ALIBI's "id<TAB>" before the links: the id must count the lines from 0. Where the links start
 * into *pos. */
static int alibi_id(const aer_align *out, const builder *b, const char *s, size_t len, long lineno, size_t *pos,
                    nmt_err *err)
{
    size_t k = 0;
    int id;
    while (k < len && is_digit(s[k])) k++;
    if (k == 0 || k == len || s[k] != '\t')
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: expected 'id<TAB>links'", out->path, lineno);
    if (to_index(s, k, &id) || (size_t)id != b->n_sent)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: sentence id %.*s, expected %zu (ids count 0, 1, 2, ..., one "
                        "line each)", out->path, lineno, QUOTE(s, k), b->n_sent);
    *pos = k + 1;
    return 0;
}

/* One line per sentence: talp, awesome, ALIBI (id<TAB>links) and test alignments (format -1). */
static int pharaoh_line(aer_align *out, builder *b, char *s, size_t len, long lineno, nmt_err *err)
{
    const int format = out->format;
    const char poss = format == AER_GOLD_TALP ? '?'
                    : format == AER_GOLD_AWESOME || format == AER_GOLD_ALIBI ? 'p' : 0;
    const char *expect = format < 0 ? "i-j" : poss == '?' ? "i-j or i?j" : "i-j or ipj";
    const char *path = out->path;
    size_t pos = 0;
    int rc = format == AER_GOLD_ALIBI ? alibi_id(out, b, s, len, lineno, &pos, err) : 0;
    if (rc) return rc;
    if (b_sentence(b, lineno)) return nomem(err, path);
    const char *f;
    size_t fl;
    while (rc == 0 && next_field(s, len, &pos, &f, &fl)) {
        int x = 0, y = 0, sure = 0;
        int pr = parse_pair(f, fl, poss, &x, &y, &sure);
        if (pr == -1)
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': not a link (expected %s)", path, lineno,
                          QUOTE(f, fl), expect);
        else if (pr == -2)
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': index too large (over %ld)", path, lineno,
                          QUOTE(f, fl), MAX_INDEX);
        else if (out->base == 1 && (x == 0 || y == 0))
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': position 0 in a file that counts from 1", path,
                          lineno, QUOTE(f, fl));
        else if (b_add(b, b->n_sent - 1, out->swapped ? y - out->base : x - out->base,
                       out->swapped ? x - out->base : y - out->base, sure, lineno))
            rc = nomem(err, path);
    }
    return rc;
}

/* NAACL 2003 WPT: "sent pos_src pos_tgt [S|P] [confidence]", one link per line. */
static int naacl_line(aer_align *out, builder *b, char *s, size_t len, long lineno, nmt_err *err)
{
    const char *path = out->path;
    const char *f[6];
    size_t fl[6], pos = 0;
    int nf = 0;
    while (nf < 6 && next_field(s, len, &pos, &f[nf], &fl[nf])) nf++;
    if (nf < 3 || nf > 5)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: %s: expected 'sentence position position [S|P] [confidence]'",
                        path, lineno, nf < 3 ? "too few fields" : "too many fields");
    int v[3];
    for (int k = 0; k < 3; k++) {
        int r = to_index(f[k], fl[k], &v[k]);
        if (r)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': %s", path, lineno, QUOTE(f[k], fl[k]),
                            r == -1 ? "not a number" : "too large");
    }
    if (v[0] == 0 || v[0] > MAX_SENT)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: sentence number %d (they count from 1, up to %ld)", path,
                        lineno, v[0], MAX_SENT);
    int sure = 1; /* the flag is optional, S by default (WPT 2003 format) */
    if (nf >= 4) {
        if (fl[3] != 1 || (f[3][0] != 'S' && f[3][0] != 'P'))
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': expected S or P", path, lineno, QUOTE(f[3], fl[3]));
        sure = f[3][0] == 'S';
    }
    if (nf == 5) {
        /* The line is NUL-terminated and the field ends at a blank or that NUL. */
        char *end;
        double c = strtod(f[4], &end);
        if (end != f[4] + fl[4] || !isfinite(c))
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': not a confidence value", path, lineno,
                            QUOTE(f[4], fl[4]));
    }
    if ((size_t)v[0] > b->n_sent) b->n_sent = (size_t)v[0];
    /* Position 0 of a 1-based file is NULL: such links are in no set. */
    if (out->base == 1 && (v[1] == 0 || v[2] == 0)) return 0;
    int x = v[1] - out->base, y = v[2] - out->base;
    if (b_add(b, (size_t)v[0] - 1, out->swapped ? y : x, out->swapped ? x : y, sure, lineno)) return nomem(err, path);
    return 0;
}

aer_gold_opts aer_gold_opts_default(void)
{
    return (aer_gold_opts){AER_GOLD_TALP, -1, 0};
}

static const char *const format_names[] = {"talp", "awesome", "alibi", "naacl"};

int aer_gold_format_parse(const char *name)
{
    for (int k = 0; k < (int)(sizeof format_names / sizeof *format_names); k++)
        if (name && !strcmp(name, format_names[k])) return k;
    return -1;
}

const char *aer_gold_format_name(int format)
{
    if (format < 0 || format >= (int)(sizeof format_names / sizeof *format_names)) return "?";
    return format_names[format];
}

/* Zeroes out and records how `path` writes its links. */
static int align_start(aer_align *out, const char *path, int format, int base, int swapped,
                       nmt_err *err)
{
    memset(out, 0, sizeof *out);
    out->format = format;
    out->base = base;
    out->swapped = swapped;
    out->path = dup_str(path ? path : "");
    if (!out->path) return nomem(err, path);
    return 0;
}

int aer_gold_read(aer_align *out, const char *path, const aer_gold_opts *opt, nmt_err *err)
{
    aer_gold_opts d = aer_gold_opts_default();
    if (!opt) opt = &d;
    memset(out, 0, sizeof *out);
    if (!path) return nmt_fail(err, NMT_ERR_ARG, "aer_gold_read: no file name");
    if (opt->format < 0 || opt->format > AER_GOLD_NAACL)
        return nmt_fail(err, NMT_ERR_ARG, "%s: unknown gold format %d", path, opt->format);
    int base = opt->base >= 0 ? opt->base
             : opt->format == AER_GOLD_AWESOME || opt->format == AER_GOLD_NAACL;
    if (base > 1) return nmt_fail(err, NMT_ERR_ARG, "%s: index base %d (0 or 1)", path, base);
    int swapped = (opt->format == AER_GOLD_ALIBI) != (opt->reverse != 0);
    int rc = align_start(out, path, opt->format, base, swapped, err);
    if (rc == 0) rc = read_lines(out, opt->format == AER_GOLD_NAACL ? naacl_line : pharaoh_line, err);
    if (rc) aer_align_free(out);
    return rc;
}

int aer_test_read(aer_align *out, const char *path, int reverse, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    if (!path) return nmt_fail(err, NMT_ERR_ARG, "aer_test_read: no file name");
    int rc = align_start(out, path, -1, 0, reverse != 0, err);
    if (rc == 0) rc = read_lines(out, pharaoh_line, err);
    if (rc) aer_align_free(out);
    return rc;
}

/* S from one file, P from the other: marks P's links sure where S has them. */
static int merge_pair(aer_align *poss, const aer_align *sure, nmt_err *err)
{
    if (sure->n_sent != poss->n_sent) {
        if (sure->n_sent < poss->n_sent)
            return aer_count_mismatch(err, sure->path, sure->n_lines, 0, sure->n_sent, poss->path,
                                      poss->n_sent);
        return aer_count_mismatch(err, poss->path, poss->n_lines, 0, poss->n_sent, sure->path,
                                  sure->n_sent);
    }
    for (size_t s = 0; s < poss->n_sent; s++) {
        size_t p = poss->off[s];
        for (size_t k = poss->off[s]; k < poss->off[s + 1]; k++) poss->links[k].sure = 0;
        for (size_t k = sure->off[s]; k < sure->off[s + 1]; k++) {
            const aer_link *l = &sure->links[k];
            char t[64];
            if (!l->sure) {
                aer_link_text(t, sizeof t, sure, l);
                return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: possible link %s in the file of "
                                "sure links", sure->path, l->line, t);
            }
            /* Both sides are sorted by (i, j): one forward walk finds every sure link in P. */
            while (p < poss->off[s + 1] && (poss->links[p].i < l->i ||
                   (poss->links[p].i == l->i && poss->links[p].j < l->j)))
                p++;
            if (p == poss->off[s + 1] || poss->links[p].i != l->i || poss->links[p].j != l->j) {
                aer_link_text(t, sizeof t, sure, l);
                return nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: sure link %s is not in %s (line "
                                "%ld): the possible links must include the sure ones", sure->path,
                                l->line, t, poss->path, poss->line[s]);
            }
            poss->links[p].sure = 1;
        }
    }
    return 0;
}

int aer_gold_read_pair(aer_align *out, const char *sure_path, const char *possible_path,
                       const aer_gold_opts *opt, nmt_err *err)
{
    aer_align sure;
    memset(out, 0, sizeof *out);
    int rc = aer_gold_read(&sure, sure_path, opt, err);
    if (rc) return rc;
    rc = aer_gold_read(out, possible_path, opt, err);
    if (rc == 0) rc = merge_pair(out, &sure, err);
    aer_align_free(&sure);
    if (rc) aer_align_free(out);
    return rc;
}

/* ---- soft matrices ---------------------------------------------------------------------- */

/* Opens sentence n_sent; its rows follow. rows, cols, line and off share one capacity, *cap
 * (off needs one entry more than the others; they all get it). */
static int soft_begin(aer_soft *s, size_t *cap, long line)
{
    size_t need = s->n_sent + 2, c = *cap;
    if (grow((void **)&s->rows, &c, need, sizeof *s->rows)) return -1;
    c = *cap;
    if (grow((void **)&s->cols, &c, need, sizeof *s->cols)) return -1;
    c = *cap;
    if (grow((void **)&s->line, &c, need, sizeof *s->line)) return -1;
    c = *cap;
    if (grow((void **)&s->off, &c, need, sizeof *s->off)) return -1;
    *cap = c;
    s->rows[s->n_sent] = 0;
    s->cols[s->n_sent] = 0;
    s->line[s->n_sent] = line;
    s->off[s->n_sent + 1] = s->off[s->n_sent];
    s->n_sent++;
    return 0;
}

/* One weight of a soft matrix: 0, or an error code with its message. */
static int soft_value(const char *path, long lineno, const char *f, size_t fl, double *v, nmt_err *err)
{
    char *end;
    *v = strtod(f, &end); /* the CLI keeps the C locale: '.' is the point */
    if (end != f + fl)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': not a number", path, lineno, QUOTE(f, fl));
    if (!isfinite(*v))
        return nmt_fail(err, NMT_ERR_NUMERIC, "%s:%ld: '%.*s': not finite", path, lineno, QUOTE(f, fl));
    if (*v < 0 || *v > 1)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%.*s': an attention weight must be in [0, 1]", path, lineno,
                        QUOTE(f, fl));
    return 0;
}

/* One row of sentence k, whose first field f (fl bytes) is read and the rest of s starts at pos:
 * its weights appended to out->val (capacity *cap_val), its width checked against the matrix's
 * first row. */
static int soft_row(aer_soft *out, size_t k, const char *s, size_t len, size_t pos, const char *f, size_t fl,
                    size_t *cap_val, long lineno, nmt_err *err)
{
    const char *path = out->path;
    int cols = 0;
    do {
        if (cols >= MAX_INDEX)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: more than %ld values in a row", path, lineno, MAX_INDEX);
        double v;
        int rc = soft_value(path, lineno, f, fl, &v, err);
        if (rc) return rc;
        size_t at = out->off[k + 1];
        if (grow((void **)&out->val, cap_val, at + 1, sizeof *out->val)) return nomem(err, path);
        out->val[at] = v;
        out->off[k + 1]++;
        cols++;
    } while (next_field(s, len, &pos, &f, &fl));
    if (out->rows[k] == 0) out->cols[k] = cols;
    else if (cols != out->cols[k])
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: row has %d values, the matrix's first row (line %ld) has %d",
                        path, lineno, cols, out->line[k], out->cols[k]);
    if (out->rows[k] >= MAX_INDEX)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: more than %ld rows in a matrix", path, lineno, MAX_INDEX);
    out->rows[k]++;
    return 0;
}

int aer_soft_read(aer_soft *out, const char *path, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    if (!path) return nmt_fail(err, NMT_ERR_ARG, "aer_soft_read: no file name");
    out->path = dup_str(path);
    out->off = calloc(1, sizeof *out->off);
    if (!out->path || !out->off) { aer_soft_free(out); return nomem(err, path); }
    size_t cap_sent = 1, cap_val = 0; /* off starts with its one entry */
    linereader rd;
    char *s;
    size_t len;
    int open = 0; /* inside a sentence (its rows so far are in out) */
    int rc = linereader_init(&rd, path, 0, err);
    while (rc == 0 && (rc = linereader_next(&rd, &s, &len, err)) == 1) {
        rc = 0;
        size_t pos = 0;
        const char *f;
        size_t fl;
        if (!next_field(s, len, &pos, &f, &fl)) { /* a blank line ends the sentence */
            if (!open)
                rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: blank line where a matrix should start (a sentence has "
                              "at least one row)", path, rd.lineno);
            open = 0;
            continue;
        }
        if (!open && soft_begin(out, &cap_sent, rd.lineno)) { rc = nomem(err, path); break; }
        open = 1;
        rc = soft_row(out, out->n_sent - 1, s, len, pos, f, fl, &cap_val, rd.lineno, err);
    }
    out->n_lines = rd.lineno;
    linereader_free(&rd);
    if (rc) aer_soft_free(out);
    return rc;
}

/* ---- sentence lengths ------------------------------------------------------------------- */

/* The words of a line, split as every other command splits them (text/words.h: runs of ASCII
 * blanks), so that a link's index means the word nmt align meant. */
static int count_tokens(const linereader *r, const char *s, size_t len, int *n, nmt_err *err)
{
    (void)len; /* the line is NUL-terminated (linereader) and holds no NUL */
    long c = text_count_words(s);
    if (c > MAX_INDEX)
        return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: more than %ld tokens", r->name, r->lineno,
                        MAX_INDEX);
    *n = (int)c;
    return 0;
}

int aer_lengths_read(aer_lengths *out, const char *src_path, const char *tgt_path, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    if (!src_path || !tgt_path) return nmt_fail(err, NMT_ERR_ARG, "aer_lengths_read: no file name");
    out->src_what = dup_str(src_path);
    out->tgt_what = dup_str(tgt_path);
    if (!out->src_what || !out->tgt_what) { aer_lengths_free(out); return nomem(err, src_path); }
    linereader rs, rt;
    size_t cap_s = 0, cap_t = 0;
    int rc = linereader_init(&rs, src_path, 0, err);
    if (rc) { aer_lengths_free(out); return rc; }
    rc = linereader_init(&rt, tgt_path, 0, err);
    if (rc) { linereader_free(&rs); aer_lengths_free(out); return rc; }
    for (;;) {
        char *s, *t;
        size_t ls, lt;
        int a, b, ns = 0, nt = 0;
        if ((a = linereader_next(&rs, &s, &ls, err)) < 0) { rc = a; break; }
        if (a && (rc = count_tokens(&rs, s, ls, &ns, err))) break;
        if ((b = linereader_next(&rt, &t, &lt, err)) < 0) { rc = b; break; }
        if (b && (rc = count_tokens(&rt, t, lt, &nt, err))) break;
        if (!a && !b) break;
        if (a != b) {
            const linereader *shorter = a ? &rt : &rs, *longer = a ? &rs : &rt;
            rc = nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: ends after %ld lines; %s has more",
                          shorter->name, shorter->lineno, shorter->lineno, longer->name);
            break;
        }
        if (grow((void **)&out->src, &cap_s, out->n_sent + 1, sizeof *out->src) ||
            grow((void **)&out->tgt, &cap_t, out->n_sent + 1, sizeof *out->tgt)) {
            rc = nomem(err, src_path);
            break;
        }
        out->src[out->n_sent] = ns;
        out->tgt[out->n_sent] = nt;
        out->n_sent++;
    }
    linereader_free(&rs);
    linereader_free(&rt);
    if (rc) aer_lengths_free(out);
    return rc;
}
