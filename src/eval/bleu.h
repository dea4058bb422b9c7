/* bleu.h: corpus and sentence BLEU computed exactly as sacreBLEU 2.x does (13a, intl and none
 * tokenizers; exp, floor, add-k and no smoothing; several references), and the Python-compatible
 * text helpers (str.lower, str.split whitespace) that chrF (chrf.h) shares with it.
 *
 * Usage: bleu_stats st = {0}; bleu_opts o = {0};          // {0} = sacreBLEU's BLEU() defaults
 *        for each segment: bleu_add_sentence(&st, hyp, refs, nrefs, &o, &err);
 *        bleu_score s; bleu_compute(&s, &st, &o, &err);   // s.score is in 0..100
 * All functions are reentrant: no global state. */
#ifndef NMT_BLEU_H
#define NMT_BLEU_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

#define BLEU_MAX_ORDER 4

enum bleu_tokenize {
    BLEU_TOK_13A = 0, /* mteval-v13a, sacreBLEU's default */
    BLEU_TOK_INTL,    /* mteval-v14 international: split at Unicode punctuation and symbols */
    BLEU_TOK_NONE     /* split at whitespace only */
};

enum bleu_smooth {
    BLEU_SMOOTH_EXP = 0, /* mteval-v13a: the k-th order with no match gets 1/(2^k * total) */
    BLEU_SMOOTH_NONE,
    BLEU_SMOOTH_FLOOR,   /* an order with no match gets smooth_value/total */
    BLEU_SMOOTH_ADD_K    /* smooth_value is added to matches and totals of orders 2..4 */
};

/* A zero-initialised struct is sacreBLEU's BLEU() default: 13a, case-sensitive, exp smoothing,
 * effective order off. */
typedef struct bleu_opts {
    enum bleu_tokenize tokenize;
    int lowercase;             /* non-zero: Python str.lower() on hypothesis and references */
    enum bleu_smooth smooth;
    double smooth_value;       /* for floor and add-k; 0 means the method's default (0.1, 1) */
    int effective_order;       /* non-zero: average only the orders the hypothesis has */
} bleu_opts;

/* sacrebleu.sentence_bleu()'s defaults: 13a, exp smoothing, effective order on. */
bleu_opts bleu_sentence_opts(void);

/* Sufficient statistics, summed over segments. Zero-initialise before the first segment. */
typedef struct bleu_stats {
    int64_t hyp_len, ref_len;             /* tokens; ref_len sums each segment's closest ref */
    int64_t match[BLEU_MAX_ORDER];        /* clipped n-gram matches, n = 1..4 */
    int64_t total[BLEU_MAX_ORDER];        /* hypothesis n-grams */
} bleu_stats;

typedef struct bleu_score {
    double score;                         /* 0..100 */
    double precisions[BLEU_MAX_ORDER];    /* percent, after smoothing */
    double bp, ratio;                     /* brevity penalty; hyp_len / ref_len (0 if ref_len 0) */
    double match[BLEU_MAX_ORDER];         /* the counts sacreBLEU reports: add-k shows them */
    double total[BLEU_MAX_ORDER];         /* with k added to orders 2..4 */
    int64_t hyp_len, ref_len;
    int eff_order;                        /* orders averaged: 4, or fewer with effective_order */
} bleu_score;

/* Adds one segment. refs[0..nrefs) are its references; NULL entries are skipped (a segment with
 * fewer references), but at least one must be present. Matches are clipped by the largest count
 * over the references; the reference length is the one closest to the hypothesis length, the
 * shorter on a tie. Returns NMT_ERR_FORMAT for invalid UTF-8, NMT_ERR_ARG for bad options. */
int bleu_add_sentence(bleu_stats *st, const char *hyp, const char *const *refs, int nrefs,
                      const bleu_opts *opts, nmt_err *err);

/* acc += x: statistics of two sets of segments summed (corpus BLEU adds them up). */
void bleu_stats_add(bleu_stats *acc, const bleu_stats *x);

/* The score from accumulated statistics, with opts' smoothing and effective order. */
int bleu_compute(bleu_score *out, const bleu_stats *st, const bleu_opts *opts, nmt_err *err);

/* One segment's BLEU; opts NULL means bleu_sentence_opts() (what sacrebleu.sentence_bleu does). */
int bleu_sentence(bleu_score *out, const char *hyp, const char *const *refs, int nrefs,
                  const bleu_opts *opts, nmt_err *err);

/* The tokens BLEU sees for one segment (after opts' lowercasing), joined by single spaces, in a
 * malloc'ed string the caller frees. */
int bleu_tokenize(char **out, const char *line, const bleu_opts *opts, nmt_err *err);

/* sacreBLEU's signature, e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:V".
 * Returns what snprintf returns. */
int bleu_signature(char *buf, size_t size, const bleu_opts *opts, int nrefs, const char *version);

/* Names as sacreBLEU spells them ("13a", "intl", "none"; "exp", "none", "floor", "add-k") and
 * their parsers (0 on success, NMT_ERR_ARG for an unknown name). */
const char *bleu_tokenize_name(enum bleu_tokenize t);
const char *bleu_smooth_name(enum bleu_smooth s);
int bleu_tokenize_parse(const char *name, enum bleu_tokenize *out);
int bleu_smooth_parse(const char *name, enum bleu_smooth *out);

/* ---- Python str semantics that sacreBLEU's results depend on (shared with chrF) ---- */

/* Python's str.isspace(): the separators of str.split() and str.rstrip(). */
int bleu_is_space(uint32_t cp);

/* Decodes UTF-8 s into a malloc'ed code point array (*out, *n); with lowercase, maps it as
 * Python's str.lower() does (full mapping: U+0130 -> i + U+0307; final sigma). */
int bleu_decode_text(uint32_t **out, size_t *n, const char *s, int lowercase, nmt_err *err);

/* A run of code points; cpspan_cmp orders spans (by length, then code points) for qsort, so that
 * equal tokens or n-grams sort together. */
typedef struct cpspan {
    const uint32_t *p;
    size_t len;
} cpspan;
int cpspan_cmp(const void *a, const void *b);

#endif
