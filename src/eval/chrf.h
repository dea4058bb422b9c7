/* chrf.h: chrF2 exactly as sacreBLEU 2.x's CHRF() defaults compute it: character n-grams of
 * orders 1..6 with whitespace removed, no word n-grams, beta 2, several references (the best
 * one per segment), the pre-2.0 "effective order" averaging that CHRF() keeps by default.
 *
 * Usage: chrf_stats st = {0}; for each segment chrf_add_sentence(&st, hyp, refs, n, 0, &err);
 *        double score = chrf_compute(&st);   // 0..100
 * All functions are reentrant. */
#ifndef NMT_CHRF_H
#define NMT_CHRF_H

#include <stddef.h>
#include <stdint.h>

#include "nmt.h"

#define CHRF_ORDER 6 /* character n-gram orders */
#define CHRF_BETA 2  /* recall weighs beta^2 = 4 times as much as precision */

/* Sufficient statistics per order n = 1..6, summed over segments. Zero-initialise. */
typedef struct chrf_stats {
    int64_t hyp[CHRF_ORDER];   /* character n-grams of the hypothesis */
    int64_t ref[CHRF_ORDER];   /* of the chosen reference */
    int64_t match[CHRF_ORDER]; /* common to both (clipped counts) */
} chrf_stats;

/* Adds one segment. Among refs[0..nrefs) (NULL entries skipped, at least one present) the
 * reference with the highest segment-level chrF contributes, the first one on a tie. lowercase:
 * Python str.lower() on both sides first. NMT_ERR_FORMAT for invalid UTF-8. */
int chrf_add_sentence(chrf_stats *st, const char *hyp, const char *const *refs, int nrefs,
                      int lowercase, nmt_err *err);

/* The score in 0..100 from accumulated statistics. */
double chrf_compute(const chrf_stats *st);

/* One segment's chrF2 (sacrebleu.sentence_chrf with its defaults). */
int chrf_sentence(double *score, const char *hyp, const char *const *refs, int nrefs,
                  int lowercase, nmt_err *err);

/* sacreBLEU's signature: "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:V". */
int chrf_signature(char *buf, size_t size, int lowercase, int nrefs, const char *version);

#endif
