/* aer.c: precision, recall and AER (Och & Ney 2003, "A Systematic Comparison of Various
 * Statistical Alignment Models", section 5) and soft AER (Tu et al. 2016, "Modeling Coverage for
 * Neural Machine Translation") summed over a corpus; the arg-max hard alignment of attention
 * matrices; and the checks that tie alignments to sentence lengths. Formulas: aer.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/aer.h"
#include "base/err.h"

/* ---- metrics ---------------------------------------------------------------------------- */

static int link_cmp(const aer_link *a, const aer_link *b)
{
    if (a->i != b->i) return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

static int strictly_sorted(const aer_link *l, size_t n)
{
    for (size_t k = 1; k < n; k++)
        if (link_cmp(&l[k - 1], &l[k]) >= 0) return 0;
    return 1;
}

int aer_add_sentence(aer_stats *st, const aer_link *gold, size_t n_gold, const aer_link *test,
                     size_t n_test, nmt_err *err)
{
    /* The merge below counts a pair twice if it is listed twice, so the order is checked. */
    if (!strictly_sorted(gold, n_gold) || !strictly_sorted(test, n_test))
        return nmt_fail(err, NMT_ERR_ARG, "aer_add_sentence: links not sorted by (i, j), or "
                        "listed twice");
    size_t s = 0, a_s = 0, a_p = 0, g = 0, t = 0;
    for (size_t k = 0; k < n_gold; k++) s += gold[k].sure != 0;
    /* Both lists are sorted: one merge walk finds A n P, and A n S among it. */
    while (g < n_gold && t < n_test) {
        int c = link_cmp(&gold[g], &test[t]);
        if (c < 0) {
            g++;
        } else if (c > 0) {
            t++;
        } else {
            a_p++;
            a_s += gold[g].sure != 0;
            g++;
            t++;
        }
    }
    st->n_sent++;
    st->a += n_test;
    st->s += s;
    st->p += n_gold;
    st->a_s += a_s;
    st->a_p += a_p;
    return 0;
}

int aer_add_soft(aer_stats *st, const aer_link *gold, size_t n_gold, const double *m, int ty,
                 int tx, nmt_err *err)
{
    if (ty < 0 || tx < 0) return nmt_fail(err, NMT_ERR_ARG, "aer_add_soft: shape (%d,%d)", ty, tx);
    double m_a = 0, m_s = 0, m_as = 0, m_ap = 0;
    size_t n = (size_t)ty * (size_t)tx;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(m[k]))
            return nmt_fail(err, NMT_ERR_NUMERIC, "aer_add_soft: weight (%zu,%zu) is %g",
                            k / (size_t)tx, k % (size_t)tx, m[k]);
        if (m[k] < 0 || m[k] > 1)
            return nmt_fail(err, NMT_ERR_ARG, "aer_add_soft: weight (%zu,%zu) = %g, not in [0, 1]",
                            k / (size_t)tx, k % (size_t)tx, m[k]);
        m_a += m[k];
    }
    for (size_t k = 0; k < n_gold; k++) {
        const aer_link *l = &gold[k];
        if (l->i < 0 || l->i >= tx || l->j < 0 || l->j >= ty)
            return nmt_fail(err, NMT_ERR_MISMATCH, "gold link %d-%d (0-based) is outside the "
                            "%dx%d matrix (target words x source words)", l->i, l->j, ty, tx);
        double v = m[(size_t)l->j * (size_t)tx + (size_t)l->i];
        m_ap += v; /* M_P is 1 on every gold link, M_S on the sure ones */
        if (l->sure) {
            m_as += v;
            m_s += 1;
        }
    }
    st->soft_sent++;
    st->m_a += m_a;
    st->m_s += m_s;
    st->m_as += m_as;
    st->m_ap += m_ap;
    return 0;
}

/* The line of sentence k, or (past the end) of the line after the file's last. */
static long sent_line(const aer_align *a, size_t k)
{
    return k < a->n_sent ? a->line[k] : a->n_lines + 1;
}

int aer_count_mismatch(nmt_err *err, const char *path, long n_lines, long extra_line, size_t n,
                       const char *ref, size_t n_ref)
{
    if (n < n_ref) {
        if (n_lines == 0)
            return nmt_fail(err, NMT_ERR_MISMATCH, "%s: empty, but %s has %zu sentences", path,
                            ref, n_ref);
        return nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: ends after %zu sentences; %s has %zu",
                        path, n_lines, n, ref, n_ref);
    }
    return nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: sentence %zu has no counterpart: %s has %zu "
                    "sentences", path, extra_line, n_ref + 1, ref, n_ref);
}

int aer_eval(aer_stats *st, const aer_align *gold, const aer_align *test, nmt_err *err)
{
    if (gold->n_sent != test->n_sent)
        return aer_count_mismatch(err, test->path, test->n_lines, sent_line(test, gold->n_sent),
                                  test->n_sent, gold->path, gold->n_sent);
    for (size_t k = 0; k < gold->n_sent; k++) {
        int rc = aer_add_sentence(st, gold->links + gold->off[k], gold->off[k + 1] - gold->off[k],
                                  test->links + test->off[k], test->off[k + 1] - test->off[k], err);
        if (rc) return rc;
    }
    return 0;
}

int aer_eval_soft(aer_stats *st, const aer_align *gold, const aer_soft *soft, nmt_err *err)
{
    if (gold->n_sent != soft->n_sent)
        return aer_count_mismatch(err, soft->path, soft->n_lines,
                                  gold->n_sent < soft->n_sent ? soft->line[gold->n_sent] : 0,
                                  soft->n_sent, gold->path, gold->n_sent);
    for (size_t k = 0; k < gold->n_sent; k++) {
        /* Checked here rather than left to aer_add_soft, to point at the gold file's line. */
        for (size_t q = gold->off[k]; q < gold->off[k + 1]; q++) {
            const aer_link *l = &gold->links[q];
            if (l->i >= soft->cols[k] || l->j >= soft->rows[k]) {
                char t[64];
                aer_link_text(t, sizeof t, gold, l);
                return nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: link %s lies outside sentence "
                                "%zu's soft matrix (%s:%ld: %d target x %d source words)",
                                gold->path, l->line, t, k + 1, soft->path, soft->line[k],
                                soft->rows[k], soft->cols[k]);
            }
        }
        int rc = aer_add_soft(st, gold->links + gold->off[k], gold->off[k + 1] - gold->off[k],
                              soft->val + soft->off[k], soft->rows[k], soft->cols[k], err);
        if (rc) return rc;
    }
    return 0;
}

static double ratio(double num, double den)
{
    return den > 0 ? num / den : NAN;
}

double aer_precision(const aer_stats *st) { return ratio((double)st->a_p, (double)st->a); }
double aer_recall(const aer_stats *st) { return ratio((double)st->a_s, (double)st->s); }

double aer_rate(const aer_stats *st)
{
    /* Counts are far below 2^53, so the sums and the quotient are exact up to one rounding. */
    return 1.0 - ratio((double)(st->a_s + st->a_p), (double)(st->a + st->s));
}

double aer_soft_rate(const aer_stats *st)
{
    return 1.0 - ratio(st->m_as + st->m_ap, st->m_a + st->m_s);
}

/* ---- hard alignment from soft matrices -------------------------------------------------- */

static int link_qcmp(const void *a, const void *b)
{
    return link_cmp(a, b);
}

int aer_soft_argmax(aer_align *out, const aer_soft *s, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    size_t n_rows = 0;
    for (size_t k = 0; k < s->n_sent; k++) n_rows += (size_t)s->rows[k];
    size_t plen = strlen(s->path) + 1;
    out->path = malloc(plen);
    out->off = calloc(s->n_sent + 1, sizeof *out->off);
    out->line = calloc(s->n_sent ? s->n_sent : 1, sizeof *out->line);
    out->links = malloc((n_rows ? n_rows : 1) * sizeof *out->links);
    if (!out->path || !out->off || !out->line || !out->links) {
        aer_align_free(out);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", s->path);
    }
    memcpy(out->path, s->path, plen);
    out->format = -1;
    out->n_sent = s->n_sent;
    out->n_lines = s->n_lines;
    size_t n = 0;
    for (size_t k = 0; k < s->n_sent; k++) {
        const double *m = s->val + s->off[k];
        for (int j = 0; j < s->rows[k]; j++) {
            const double *row = m + (size_t)j * (size_t)s->cols[k];
            int best = 0;
            for (int i = 1; i < s->cols[k]; i++)
                if (row[i] > row[best]) best = i; /* strict: ties keep the lowest i */
            if (row[best] > 0) out->links[n++] = (aer_link){best, j, 1, s->line[k] + j};
        }
        /* Rows come in j order; the link order is (i, j). */
        qsort(out->links + out->off[k], n - out->off[k], sizeof *out->links, link_qcmp);
        out->off[k + 1] = n;
        out->line[k] = s->line[k];
    }
    return 0;
}

/* ---- lengths and range checks ----------------------------------------------------------- */

int aer_lengths_from_soft(aer_lengths *out, const aer_soft *s, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    size_t plen = strlen(s->path) + 1, n = s->n_sent ? s->n_sent : 1;
    out->src_what = malloc(plen);
    out->tgt_what = malloc(plen);
    out->src = malloc(n * sizeof *out->src);
    out->tgt = malloc(n * sizeof *out->tgt);
    if (!out->src_what || !out->tgt_what || !out->src || !out->tgt) {
        aer_lengths_free(out);
        return nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", s->path);
    }
    memcpy(out->src_what, s->path, plen);
    memcpy(out->tgt_what, s->path, plen);
    for (size_t k = 0; k < s->n_sent; k++) {
        out->src[k] = s->cols[k];
        out->tgt[k] = s->rows[k];
    }
    out->n_sent = s->n_sent;
    return 0;
}

void aer_link_text(char *buf, size_t n, const aer_align *a, const aer_link *l)
{
    int x = (a->swapped ? l->j : l->i) + a->base, y = (a->swapped ? l->i : l->j) + a->base;
    if (a->format == AER_GOLD_NAACL)
        snprintf(buf, n, "'%d %d'", x, y);
    else
        snprintf(buf, n, "%d%c%d", x,
                 l->sure ? '-' : a->format == AER_GOLD_TALP ? '?' : 'p', y);
}

int aer_check_range(const aer_align *a, const aer_lengths *len, nmt_err *err)
{
    if (a->n_sent != len->n_sent)
        return aer_count_mismatch(err, a->path, a->n_lines, sent_line(a, len->n_sent), a->n_sent,
                                  len->src_what, len->n_sent);
    for (size_t k = 0; k < a->n_sent; k++) {
        for (size_t q = a->off[k]; q < a->off[k + 1]; q++) {
            const aer_link *l = &a->links[q];
            /* Say it in the file's own terms: which side, and the number as written. */
            int bad_src = l->i >= len->src[k], bad_tgt = l->j >= len->tgt[k];
            if (!bad_src && !bad_tgt) continue;
            int src_side = bad_src;
            int pos = (src_side ? l->i : l->j) + a->base;
            char t[64];
            aer_link_text(t, sizeof t, a, l);
            return nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: link %s: %s position %d is past the "
                            "end of sentence %zu, which has %d %s words (%s)", a->path, l->line, t,
                            src_side ? "source" : "target", pos, k + 1,
                            src_side ? len->src[k] : len->tgt[k], src_side ? "source" : "target",
                            src_side ? len->src_what : len->tgt_what);
        }
    }
    return 0;
}

int aer_soft_check_shape(const aer_soft *s, const aer_lengths *len, nmt_err *err)
{
    if (s->n_sent != len->n_sent)
        return aer_count_mismatch(err, s->path, s->n_lines,
                                  len->n_sent < s->n_sent ? s->line[len->n_sent] : 0, s->n_sent,
                                  len->src_what, len->n_sent);
    for (size_t k = 0; k < s->n_sent; k++)
        if (s->rows[k] != len->tgt[k] || s->cols[k] != len->src[k])
            return nmt_fail(err, NMT_ERR_MISMATCH, "%s:%ld: sentence %zu's matrix has %d rows of "
                            "%d values, but the sentence has %d target words (%s) and %d source "
                            "words (%s)", s->path, s->line[k], k + 1, s->rows[k], s->cols[k],
                            len->tgt[k], len->tgt_what, len->src[k], len->src_what);
    return 0;
}

/* ---- freeing ---------------------------------------------------------------------------- */

void aer_align_free(aer_align *a)
{
    if (!a) return;
    free(a->path);
    free(a->off);
    free(a->links);
    free(a->line);
    memset(a, 0, sizeof *a);
}

void aer_soft_free(aer_soft *s)
{
    if (!s) return;
    free(s->path);
    free(s->rows);
    free(s->cols);
    free(s->off);
    free(s->val);
    free(s->line);
    memset(s, 0, sizeof *s);
}

void aer_lengths_free(aer_lengths *l)
{
    if (!l) return;
    free(l->src_what);
    free(l->tgt_what);
    free(l->src);
    free(l->tgt);
    memset(l, 0, sizeof *l);
}
