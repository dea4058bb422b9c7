/* report.c: the numbers of Table 1 and Figure 2 (report.h), the plain vocabulary reader, the TSV
 * and the figure's chart spec. Each sentence's BLEU statistics are summed into every subset it
 * belongs to (all, No UNK, its bucket): they add up, so a subset scores as it would alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/err.h"
#include "data/corpus.h"
#include "eval/report.h"
#include "text/unicode.h"

/* ------------------------------------------------------------------ unknown words */
/* The blanks between the words a model reads (as corpus.c's split_tokens). */
static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

int report_has_unknown(const char *line, const vocab *v)
{
    for (const char *p = line; *p;) {
        while (is_blank(*p)) p++;
        if (!*p) break;
        const char *w = p;
        while (*p && !is_blank(*p)) p++;
        /* ids 0 and 1 are EOS and UNK: a literal "</s>" or "<unk>" in the text is no known word */
        if (vocab_find(v, w, (size_t)(p - w)) <= VOCAB_UNK) return 1;
    }
    return 0;
}

long report_select_known(unsigned char *known, const char *const *src, const char *const *ref, long n,
                         const vocab *sv, const vocab *tv)
{
    long count = 0;
    for (long i = 0; i < n; i++) {
        known[i] = !report_has_unknown(src[i], sv) && !report_has_unknown(ref[i], tv);
        count += known[i];
    }
    return count;
}

/* ------------------------------------------------------------------ vocabulary files */
static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

typedef struct entry {
    const char *word;
    long line;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->word, y->word);
    return c ? c : (x->line > y->line) - (x->line < y->line);
}

int report_vocab_read(vocab **out, const char *path, nmt_err *err)
{
    *out = NULL;
    textfile t;
    int rc = textfile_read(&t, path, err);
    if (rc) return rc;
    entry *e = malloc(sizeof *e * (size_t)(t.nlines + 1));
    const char **words = malloc(sizeof *words * (size_t)(t.nlines + 2));
    if (!e || !words) { rc = nmt_fail(err, NMT_ERR_NOMEM, "%s: out of memory", path); goto done; }
    long n = 0;
    for (long i = 0; i < t.nlines; i++) {
        char *s = t.line[i];
        size_t len = strlen(s);
        if (len && s[len - 1] == '\r') s[--len] = 0; /* CRLF files */
        const char *q = s;
        while (is_blank(*q)) q++;
        if (!*q) continue;
        /* fields at tabs: word | word, count | id, word, count */
        char *f[4];
        int nf = 0;
        for (char *p = s; nf < 4;) {
            f[nf++] = p;
            char *tab = strchr(p, '\t');
            if (!tab) break;
            *tab = 0;
            p = tab + 1;
        }
        const char *w = NULL;
        if (nf == 1) w = f[0];
        else if (nf == 2 && all_digits(f[1])) w = f[0];
        else if (nf == 3 && all_digits(f[0]) && all_digits(f[2])) w = f[1];
        if (!w) {
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: expected a word, or id<TAB>word<TAB>count as `nmt vocab` writes",
                          path, i + 1);
            goto done;
        }
        if (!*w || strpbrk(w, " \t\r\v\f")) {
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%s' is not one word (a vocabulary holds one word a line)",
                          path, i + 1, w);
            goto done;
        }
        if (!strcmp(w, VOCAB_EOS_STR) || !strcmp(w, VOCAB_UNK_STR)) continue; /* added below */
        if (n >= 0x7ffffff0L) { rc = nmt_fail(err, NMT_ERR_FORMAT, "%s: too many words", path); goto done; }
        e[n].word = w;
        e[n].line = i + 1;
        n++;
    }
    /* a repeated word is reported at its second line (vocab_from_words would only give an index) */
    for (long i = 0; i < n; i++) words[i + 2] = e[i].word;
    qsort(e, (size_t)n, sizeof *e, entry_cmp);
    for (long i = 1; i < n; i++)
        if (!strcmp(e[i].word, e[i - 1].word)) {
            rc = nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: '%s' repeated (first at line %ld)", path, e[i].line,
                          e[i].word, e[i - 1].line);
            goto done;
        }
    words[0] = VOCAB_EOS_STR;
    words[1] = VOCAB_UNK_STR;
    nmt_err inner;
    if (vocab_from_words(out, words, (int)(n + 2), &inner))
        rc = nmt_fail(err, inner.code, "%s: %s", path, inner.msg);
done:
    free(e);
    free(words);
    textfile_free(&t);
    return rc;
}

/* ------------------------------------------------------------------ scores */
void report_free(report *r)
{
    if (!r) return;
    free(r->bleu_all);
    free(r->bleu_nounk);
    free(r->known);
    free(r->bucket_n);
    free(r->bucket_bleu);
    memset(r, 0, sizeof *r);
}

static int check_input(const report_input *in, nmt_err *err)
{
    if (in->n < 1) return nmt_fail(err, NMT_ERR_ARG, "report: no sentences");
    if (in->nsys < 1 || !in->sys) return nmt_fail(err, NMT_ERR_ARG, "report: no system to score");
    if (!in->src || !in->ref) return nmt_fail(err, NMT_ERR_ARG, "report: sources or references missing");
    if (!in->src_vocab != !in->tgt_vocab)
        return nmt_fail(err, NMT_ERR_ARG, "report: the No-UNK subset needs both a source and a target vocabulary");
    for (int s = 0; s < in->nsys; s++) {
        if (!in->sys[s].hyp) return nmt_fail(err, NMT_ERR_ARG, "report: system %d has no hypotheses", s + 1);
        if (in->sys[s].hyp_nounk && !in->src_vocab)
            return nmt_fail(err, NMT_ERR_ARG, "report: No-UNK hypotheses given without vocabularies");
    }
    return NMT_OK;
}

/* bleu_add_sentence for line i, with the file and line in the message. */
static int add_line(bleu_stats *st, const char *hyp, const char *ref, const bleu_opts *o, const char *name, long i,
                    nmt_err *err)
{
    nmt_err e;
    const char *refs[1] = {ref};
    if (bleu_add_sentence(st, hyp, refs, 1, o, &e))
        return nmt_fail(err, e.code, "%s:%ld: %s", name ? name : "hypotheses", i + 1, e.msg);
    return NMT_OK;
}

/* The per-system sums of BLEU statistics: all sentences, the No-UNK subset, per length bucket
 * ([bucket * nsys + system]); len[i] is sentence i's source length in words. */
typedef struct report_sums { int *len; bleu_stats *all, *nounk, *bucket; } report_sums;

static void sums_free(report_sums *m)
{
    free(m->len);
    free(m->all);
    free(m->nounk);
    free(m->bucket);
}

/* The references' UTF-8 first, so that a bad one is named as such and not through a hypothesis. */
static int check_refs(const report_input *in, nmt_err *err)
{
    for (long i = 0; i < in->n; i++) {
        long bad = utf8_find_invalid(in->ref[i], strlen(in->ref[i]));
        if (bad >= 0)
            return nmt_fail(err, NMT_ERR_FORMAT, "%s:%ld: invalid UTF-8 at byte %ld of the line",
                            in->ref_name ? in->ref_name : "references", i + 1, bad + 1);
    }
    return NMT_OK;
}

/* Source lengths, the buckets and their counts, and which sentences are free of unknown words;
 * -1 when out of memory. */
static int report_layout(report *r, report_sums *m, const report_input *in)
{
    long n = in->n;
    int ns = in->nsys;
    for (long i = 0; i < n; i++) {
        m->len[i] = count_tokens(in->src[i]);
        if (m->len[i] > r->max_words) r->max_words = m->len[i];
    }
    r->nbuckets = report_bucket_of(r->max_words) + 1;
    r->bucket_n = calloc((size_t)r->nbuckets, sizeof *r->bucket_n);
    r->bucket_bleu = calloc((size_t)r->nbuckets * (size_t)ns, sizeof *r->bucket_bleu);
    m->bucket = calloc((size_t)r->nbuckets * (size_t)ns, sizeof *m->bucket);
    if (!r->bucket_n || !r->bucket_bleu || !m->bucket) return -1;
    for (long i = 0; i < n; i++) r->bucket_n[report_bucket_of(m->len[i])]++;
    if (!in->src_vocab) return 0;
    r->has_nounk = 1;
    r->known = malloc((size_t)n);
    r->bleu_nounk = calloc((size_t)ns, sizeof *r->bleu_nounk);
    if (!r->known || !r->bleu_nounk) return -1;
    for (long i = 0; i < n; i++) {
        int us = report_has_unknown(in->src[i], in->src_vocab), ur = report_has_unknown(in->ref[i], in->tgt_vocab);
        r->n_unk_src += us;
        r->n_unk_ref += ur;
        r->known[i] = !us && !ur;
        r->n_known += r->known[i];
    }
    return 0;
}

/* System s's statistics into the sums: every sentence, its bucket, and on the No-UNK subset its
 * No-UNK hypotheses where given (else the same ones). */
static int count_system(const report *r, report_sums *m, const report_input *in, int s, nmt_err *err)
{
    const report_system *sy = &in->sys[s];
    int ns = in->nsys, rc;
    for (long i = 0; i < in->n; i++) {
        bleu_stats st = {0};
        if ((rc = add_line(&st, sy->hyp[i], in->ref[i], &in->bleu, sy->hyp_name, i, err))) return rc;
        bleu_stats_add(&m->all[s], &st);
        bleu_stats_add(&m->bucket[(size_t)report_bucket_of(m->len[i]) * ns + s], &st);
        if (!r->known || !r->known[i]) continue;
        if (sy->hyp_nounk) {
            st = (bleu_stats){0};
            if ((rc = add_line(&st, sy->hyp_nounk[i], in->ref[i], &in->bleu, sy->nounk_name, i, err))) return rc;
        }
        bleu_stats_add(&m->nounk[s], &st);
    }
    return NMT_OK;
}

/* System s's scores from its sums. */
static int score_system(report *r, const report_sums *m, const report_input *in, int s, nmt_err *err)
{
    int ns = in->nsys, rc;
    bleu_score sc;
    if ((rc = bleu_compute(&sc, &m->all[s], &in->bleu, err))) return rc;
    r->bleu_all[s] = sc.score;
    if (r->has_nounk && r->n_known > 0) {
        if ((rc = bleu_compute(&sc, &m->nounk[s], &in->bleu, err))) return rc;
        r->bleu_nounk[s] = sc.score;
    }
    for (int b = 0; b < r->nbuckets; b++) {
        if (!r->bucket_n[b]) continue;
        if ((rc = bleu_compute(&sc, &m->bucket[(size_t)b * ns + s], &in->bleu, err))) return rc;
        r->bucket_bleu[(size_t)b * ns + s] = sc.score;
    }
    return NMT_OK;
}

int report_compute(report *out, const report_input *in, nmt_err *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_input(in, err);
    if (rc) return rc;
    report *r = out;
    int ns = in->nsys;
    r->nsys = ns;
    r->n = in->n;
    report_sums m = {malloc(sizeof *m.len * (size_t)in->n), calloc((size_t)ns, sizeof *m.all),
                     calloc((size_t)ns, sizeof *m.nounk), NULL};
    r->bleu_all = calloc((size_t)ns, sizeof *r->bleu_all);
    int oom = !m.len || !m.all || !m.nounk || !r->bleu_all;
    if (!oom && !(rc = check_refs(in, err))) oom = report_layout(r, &m, in);
    if (oom) rc = nmt_fail(err, NMT_ERR_NOMEM, "report: out of memory for %ld sentences", in->n);
    for (int s = 0; s < ns && !rc; s++) rc = count_system(r, &m, in, s, err);
    for (int s = 0; s < ns && !rc; s++) rc = score_system(r, &m, in, s, err);
    sums_free(&m);
    if (rc) report_free(r);
    return rc;
}

/* ------------------------------------------------------------------ outputs */
void report_bucket_label(char *buf, size_t size, int k)
{
    snprintf(buf, size, "%d-%d", report_bucket_lo(k), report_bucket_hi(k));
}

int report_write_tsv(const report *r, const char *const *labels, const char *path, nmt_err *err)
{
    for (int s = 0; s < r->nsys; s++)
        if (strpbrk(labels[s], "\t\r\n"))
            return nmt_fail(err, NMT_ERR_ARG, "%s: label '%s' holds a tab or a line break", path, labels[s]);
    /* through a temporary: a write that fails half way leaves the old table, not a cut one */
    atomic_file af;
    int rc = atomic_open(&af, path, err);
    if (rc) return rc;
    FILE *f = af.fp;
    fputs("bucket\tsentences", f);
    for (int s = 0; s < r->nsys; s++) fprintf(f, "\t%s", labels[s]);
    fputc('\n', f);
    for (int b = 0; b < r->nbuckets; b++) {
        if (!r->bucket_n[b]) continue;
        char lab[32];
        report_bucket_label(lab, sizeof lab, b);
        fprintf(f, "%s\t%ld", lab, r->bucket_n[b]);
        for (int s = 0; s < r->nsys; s++) fprintf(f, "\t%.4f", r->bucket_bleu[(size_t)b * r->nsys + s]);
        fputc('\n', f);
    }
    return atomic_commit(&af, err);
}

void report_figure_free(report_figure *fig)
{
    if (!fig) return;
    for (int k = 0; fig->tick_label && k < fig->spec.n_xticks; k++) free(fig->tick_label[k]);
    for (int k = 0; fig->tick_sub && k < fig->spec.n_xticks; k++) free(fig->tick_sub[k]);
    free(fig->tick_label);
    free(fig->tick_sub);
    free(fig->series);
    free(fig->x);
    free(fig->y);
    free(fig->ticks);
    memset(fig, 0, sizeof *fig);
}

int report_figure_make(report_figure *fig, const report *r, const char *const *labels, const char *title,
                       nmt_err *err)
{
    memset(fig, 0, sizeof *fig);
    int nb = r->nbuckets, ns = r->nsys, m = 0;
    for (int b = 0; b < nb; b++) m += r->bucket_n[b] > 0;
    fig->series = calloc((size_t)ns, sizeof *fig->series);
    fig->x = malloc(sizeof *fig->x * (size_t)(m * ns + 1));
    fig->y = malloc(sizeof *fig->y * (size_t)(m * ns + 1));
    fig->ticks = malloc(sizeof *fig->ticks * (size_t)nb);
    fig->tick_label = calloc((size_t)nb, sizeof *fig->tick_label);
    fig->tick_sub = calloc((size_t)nb, sizeof *fig->tick_sub);
    if (!fig->series || !fig->x || !fig->y || !fig->ticks || !fig->tick_label || !fig->tick_sub) goto oom;
    /* every bucket up to the longest source gets a tick, the empty ones marked n=0, so that the
     * gap a skipped bucket leaves in the lines is visible */
    fig->spec.n_xticks = nb;
    for (int b = 0; b < nb; b++) {
        char buf[64];
        fig->ticks[b] = (report_bucket_lo(b) + report_bucket_hi(b) + 1) / 2.0;
        report_bucket_label(buf, sizeof buf, b);
        fig->tick_label[b] = strdup(buf);
        snprintf(buf, sizeof buf, "n=%ld", r->bucket_n[b]);
        fig->tick_sub[b] = strdup(buf);
        if (!fig->tick_label[b] || !fig->tick_sub[b]) goto oom;
    }
    for (int s = 0; s < ns; s++) {
        double *x = fig->x + (size_t)s * m, *y = fig->y + (size_t)s * m;
        int j = 0;
        for (int b = 0; b < nb; b++) {
            if (!r->bucket_n[b]) continue;
            x[j] = fig->ticks[b];
            y[j] = r->bucket_bleu[(size_t)b * ns + s];
            j++;
        }
        fig->series[s] = (chart_series){labels[s], m, x, y};
    }
    chart_spec *c = &fig->spec;
    c->title = title ? title : "BLEU by source sentence length";
    c->x_label = "Sentence length (source words)";
    c->y_label = "BLEU score";
    c->nseries = ns;
    c->series = fig->series;
    c->x_min = 0;
    c->x_max = (double)nb * REPORT_BUCKET_WORDS;
    /* no line across an empty bucket: it would show a trend where there is no data */
    c->max_gap = 1.5 * REPORT_BUCKET_WORDS;
    c->xtick = fig->ticks;
    c->xtick_label = (const char *const *)fig->tick_label;
    c->xtick_sub = (const char *const *)fig->tick_sub;
    return NMT_OK;
oom:
    report_figure_free(fig);
    return nmt_fail(err, NMT_ERR_NOMEM, "report: out of memory for the figure");
}
