/* bootstrap.h: paired bootstrap resampling for BLEU (Koehn 2004, "Statistical significance tests
 * for machine translation evaluation"), computed as sacreBLEU 2.x's --paired-bs computes it: the
 * same resamples of the test set's segments for every system, a 95% interval from the resampled
 * scores, and a p-value for each system's difference from the first (the baseline). */
#ifndef NMT_BOOTSTRAP_H
#define NMT_BOOTSTRAP_H

#include <stdint.h>

#include "eval/bleu.h"

typedef struct bleu_bs {
    double score;   /* BLEU of the whole test set */
    double mean;    /* of the resampled scores */
    double ci;      /* half the distance from the (R/40)-th smallest resampled score to the
                       (R/40)-th largest: sacreBLEU's 95% interval, mean ± ci */
    double p;       /* systems after the first: the share of resamples whose |difference from the
                       baseline|, centred on its mean, is at least the observed |difference|,
                       as (count + 1) / (R + 1); the baseline: -1 */
} bleu_bs;

/* seg[s][0..nseg) are system s's per-segment statistics (bleu_add_sentence on a zeroed struct
 * per segment), s in 0..nsys, system 0 the baseline. R resamples of nseg segments each, drawn
 * with replacement from seed; out[0..nsys) receive the results. NMT_ERR_ARG for nseg < 1,
 * R < 40 or nsys < 1; NMT_ERR_NOMEM. */
int bleu_paired_bootstrap(bleu_bs *out, const bleu_stats *const *seg, int nsys, long nseg, int R, uint64_t seed,
                          const bleu_opts *o, nmt_err *err);

#endif
