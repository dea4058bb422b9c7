/* report.h: Table 1 and Figure 2 of Bahdanau et al. 2014 for several systems: BLEU on all
 * sentences and on the "No UNK" subset (no unknown word in source and reference), and BLEU by
 * source-sentence length in buckets of 10 words, as a TSV and a chart (chart.h). */
#ifndef NMT_REPORT_H
#define NMT_REPORT_H

/* Usage: report_input in = {...};  report r;  report_compute(&r, &in, &err);
 *        ... r.bleu_all[s], r.bleu_nounk[s], r.bucket_bleu[b * r.nsys + s] ...
 *        report_write_tsv(&r, labels, "out.tsv", &err);
 *        report_figure fig;  report_figure_make(&fig, &r, labels, NULL, &err);  chart_write(&fig.spec, ...);
 *        report_figure_free(&fig);  report_free(&r);
 * BLEU is sacreBLEU's (bleu.h): a subset's score comes from the sum of its sentences' statistics,
 * exactly what bleu_compute gives on those sentences alone. Words are what the model reads:
 * tokens separated by blanks (corpus.h split_tokens). Nothing is printed. */

#include "eval/bleu.h"
#include "viz/chart.h"
#include "nmt.h"
#include "data/vocab.h"

/* Bucket k holds the sentences of 10k to 10k+9 source words, both bounds inclusive (0-9, 10-19,
 * ...); an empty source line (0 words) falls in bucket 0. */
#define REPORT_BUCKET_WORDS 10

static inline int report_bucket_of(int n_words) { return n_words / REPORT_BUCKET_WORDS; }
static inline int report_bucket_lo(int k) { return k * REPORT_BUCKET_WORDS; }
static inline int report_bucket_hi(int k) { return k * REPORT_BUCKET_WORDS + REPORT_BUCKET_WORDS - 1; }

/* Is some word of line unknown to v, i.e. absent from it, or the literal "<unk>" or "</s>"
 * (which stand for no real word)? 0 for an empty line. */
int report_has_unknown(const char *line, const vocab *v);

/* Marks known[i] = 1 for the sentences whose source has no word unknown to sv and whose
 * reference has none unknown to tv; returns how many. */
long report_select_known(unsigned char *known, const char *const *src, const char *const *ref, long n,
                         const vocab *sv, const vocab *tv);

/* Reads a plain vocabulary file: one word per line, or `nmt vocab` output (id<TAB>word<TAB>count;
 * also word<TAB>count). "</s>" and "<unk>" are added when absent; empty lines are skipped. Errors
 * (file:line): invalid UTF-8, a word with blanks, another line layout, a repeated word. */
int report_vocab_read(vocab **out, const char *path, nmt_err *err);

typedef struct report_system {
    const char *label;             /* for messages and the legend */
    const char *hyp_name;          /* file names, for messages (may be NULL) */
    const char *const *hyp;        /* [n] hypotheses */
    const char *nounk_name;
    const char *const *hyp_nounk;  /* [n] decoded with UNK disallowed, or NULL: hyp serves both */
} report_system;

typedef struct report_input {
    long n;                        /* sentences, >= 1 */
    const char *const *src;        /* [n] sources (tokenized as the model reads them) */
    const char *const *ref;        /* [n] references */
    const char *ref_name;
    int nsys;                      /* >= 1 */
    const report_system *sys;
    const vocab *src_vocab, *tgt_vocab; /* both NULL: no "No UNK" column */
    bleu_opts bleu;                /* usually {0}: 13a, as `nmt bleu` */
} report_input;

typedef struct report {
    int nsys;
    long n;                        /* sentences */
    double *bleu_all;              /* [nsys] */
    int has_nounk;                 /* vocabularies were given */
    long n_known;                  /* sentences in the No-UNK subset */
    long n_unk_src, n_unk_ref;     /* sentences with an unknown word in the source / the reference */
    double *bleu_nounk;            /* [nsys]; NULL without vocabularies; 0 for an empty subset */
    unsigned char *known;          /* [n] 1 = in the No-UNK subset; NULL without vocabularies */
    int nbuckets;                  /* buckets 0 .. nbuckets-1 (the last one holds the longest source) */
    long *bucket_n;                /* [nbuckets] sentences; 0 = empty bucket, left out of TSV and plot */
    double *bucket_bleu;           /* [nbuckets * nsys]: bucket b, system s at b * nsys + s */
    int max_words;                 /* longest source */
} report;

int report_compute(report *out, const report_input *in, nmt_err *err);
void report_free(report *r);

/* "10-19": the words of bucket k, both bounds inclusive. */
void report_bucket_label(char *buf, size_t size, int k);

/* PREFIX.tsv: a header "bucket<TAB>sentences<TAB>label..." then one row per non-empty bucket
 * (label as report_bucket_label, BLEU with 4 decimals). Labels must hold no tab or newline. The
 * file is replaced whole (base/atomic.h): after an error an existing one is as it was. */
int report_write_tsv(const report *r, const char *const *labels, const char *path, nmt_err *err);

/* Figure 2 as a chart_spec: one series per system over the non-empty buckets, each point at its
 * bucket's middle (15 for 10-19), the line broken across empty buckets, x ticks labelled "10-19"
 * with "n=123" under them (every bucket up to the longest source, empty ones "n=0"). The arrays
 * live in *fig; free with report_figure_free. */
typedef struct report_figure {
    chart_spec spec;
    chart_series *series;
    double *x, *y, *ticks;
    char **tick_label, **tick_sub;
} report_figure;

int report_figure_make(report_figure *fig, const report *r, const char *const *labels, const char *title,
                       nmt_err *err);
void report_figure_free(report_figure *fig);

#endif
