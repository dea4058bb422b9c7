/* chrf.h: chrF exactly as sacreBLEU 2.x's CHRF() computes it: character n-grams of orders 1..6
 * with whitespace removed, optionally word n-grams of orders 1..word_order (chrF++ is
 * word_order 2), beta 2, several references (the best one per segment), the pre-2.0 "effective
 * order" averaging that CHRF() keeps by default.
 *
 * Usage: chrf_stats st = {0}; chrf_opts o = {0};   // {0} = CHRF() defaults (chrF2)
 *        for each segment chrf_add_sentence(&st, hyp, refs, n, &o, &err);
 *        double score = chrf_compute(&st, &o);   // 0..100
 * All functions are reentrant. */
#ifndef NMT_CHRF_H
#define NMT_CHRF_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

#define CHRF_ORDER 6          /* character n-gram orders */
#define CHRF_MAX_WORD_ORDER 6 /* word n-gram orders at most (sacreBLEU's chrF++ uses 2) */
#define CHRF_MAX_ORDERS (CHRF_ORDER + CHRF_MAX_WORD_ORDER)
#define CHRF_BETA 2           /* recall weighs beta^2 = 4 times as much as precision */

/* A zero-initialised struct is CHRF()'s default. */
typedef struct chrf_opts {
    int lowercase;  /* non-zero: Python str.lower() on both sides first */
    int word_order; /* 0..CHRF_MAX_WORD_ORDER: word n-gram orders after the character ones */
} chrf_opts;

/* Sufficient statistics per order (the 6 character orders, then the word orders), summed over
 * segments. Zero-initialise. */
typedef struct chrf_stats {
    int64_t hyp[CHRF_MAX_ORDERS];   /* n-grams of the hypothesis */
    int64_t ref[CHRF_MAX_ORDERS];   /* of the chosen reference */
    int64_t match[CHRF_MAX_ORDERS]; /* common to both (clipped counts) */
} chrf_stats;

/* Adds one segment. Among refs[0..nrefs) (NULL entries skipped, at least one present) the
 * reference with the highest segment-level chrF contributes, the first one on a tie. opts NULL:
 * the defaults. NMT_ERR_FORMAT for invalid UTF-8, NMT_ERR_ARG for a word order out of range. */
int chrf_add_sentence(chrf_stats *st, const char *hyp, const char *const *refs, int nrefs,
                      const chrf_opts *opts, nmt_err *err);

/* The score in 0..100 from accumulated statistics (opts: the word order they were counted
 * with). */
double chrf_compute(const chrf_stats *st, const chrf_opts *opts);

/* One segment's chrF (sacrebleu.sentence_chrf, or CHRF(word_order=2).sentence_score). */
int chrf_sentence(double *score, const char *hyp, const char *const *refs, int nrefs,
                  const chrf_opts *opts, nmt_err *err);

/* sacreBLEU's name of the score: "chrF2", "chrF2++" for word order 2. */
const char *chrf_name(char *buf, size_t size, const chrf_opts *opts);

/* sacreBLEU's signature: "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:V". */
int chrf_signature(char *buf, size_t size, const chrf_opts *opts, int nrefs, const char *version);

#endif
