/* ter.h: TER (translation edit rate, Snover et al. 2006) exactly as sacreBLEU 2.x computes it:
 * tercom's shift heuristics and beam-limited edit distance, its tokenizer (case-insensitive by
 * default; optional normalisation and punctuation removal), several references (the fewest
 * edits, the mean reference length).
 *
 * Usage: ter_stats st = {0}; ter_opts o = {0};           // {0} = sacreBLEU's TER() defaults
 *        for each segment: ter_add_sentence(&st, hyp, refs, nrefs, &o, &err);
 *        double score = ter_compute(&st);                // 100 * edits / reference words
 * All functions are reentrant: no global state. */
#ifndef NMT_TER_H
#define NMT_TER_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

/* A zero-initialised struct is sacreBLEU's TER() default (its signature's case:lc, norm:no,
 * punct:yes). sacreBLEU's asian_support is not implemented. */
typedef struct ter_opts {
    int case_sensitive; /* non-zero: no str.lower() */
    int normalized;     /* non-zero: tercom's normalisation (punctuation split off, as 13a) */
    int no_punct;       /* non-zero: remove . , ? : ; ! " ( ) */
} ter_opts;

/* Sums over segments. Zero-initialise before the first segment. */
typedef struct ter_stats {
    int64_t edits;  /* per segment the fewest over its references: shifts + word edits */
    double ref_len; /* per segment the mean word count of its references */
} ter_stats;

/* Adds one segment. refs[0..nrefs) are its references; NULL entries are skipped, but at least
 * one must be present. NMT_ERR_FORMAT for invalid UTF-8, NMT_ERR_ARG for no reference. */
int ter_add_sentence(ter_stats *st, const char *hyp, const char *const *refs, int nrefs,
                     const ter_opts *opts, nmt_err *err);

/* 100 * edits / ref_len; with no reference words, 100 when there are edits, else 0. Can
 * exceed 100. */
double ter_compute(const ter_stats *st);

/* One segment's TER (sacreBLEU's TER().sentence_score). opts NULL: the defaults. */
int ter_sentence(double *score, const char *hyp, const char *const *refs, int nrefs,
                 const ter_opts *opts, nmt_err *err);

/* The words TER compares, joined by single spaces, in a malloc'ed string the caller frees. */
int ter_tokenize(char **out, const char *line, const ter_opts *opts, nmt_err *err);

/* The edits (shifts + insertions, deletions, substitutions) turning the word ids hyp[0..nh)
 * into ref[0..nr), with sacreBLEU's limits on shifts; nr == 0 gives nh. */
int ter_edits(int64_t *edits, const uint32_t *hyp, int nh, const uint32_t *ref, int nr, nmt_err *err);

/* sacreBLEU's signature: "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:V". */
int ter_signature(char *buf, size_t size, const ter_opts *opts, int nrefs, const char *version);

#endif
