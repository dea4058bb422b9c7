/* beam.h: beam search over a batch of source sentences (MODEL.md section 4), by one model or an
 * ensemble of models (decode/ensemble.h, which says what their score is): each sentence keeps
 * up to K live hypotheses; a hypothesis that emits EOS is finished and the live beam shrinks by
 * one; search stops when K have finished, none is live, or the length limit is reached, where
 * the live ones compete with the finished. Final ranking by log-probability, optionally divided
 * by the length in target words (EOS included). K = 1 is greedy decoding. A sentence may carry
 * hints: a prefix its hypotheses are made to begin with, and phrases that must appear (EOS is
 * refused until they have; those that meet them rank first). */
#ifndef NMT_BEAM_H
#define NMT_BEAM_H

#include <stdint.h>

#include "decode/constrain.h"
#include "decode/ensemble.h"

typedef struct beam_opts {
    int K;              /* beam size, >= 1 */
    int normalize;      /* rank by logprob / length */
    double max_ratio;   /* length limit: max(1, floor(max_ratio × source length with EOS)) */
    int no_unk;         /* never emit UNK */
    int nbest;          /* hypotheses returned per sentence (<= K) */
    int attn;           /* keep each hypothesis's attention rows */
    double alpha;       /* with normalize: logprob / length^alpha */
    /* sample_search's (decode/sample.h); beam_search_ens does not read them */
    int topk;           /* draw among the topk most probable words (0: all) */
    double temp;        /* draw from p^(1/temp) */
    const uint64_t *seeds; /* [B] each sentence's seed */
    double topp;        /* draw within the nucleus of mass topp (in (0, 1); otherwise all) */
    /* beam_search_ens's: [B] each sentence's prefix and phrases (decode/constrain.h), NULL entries or
     * a NULL array for none; a prefix fits the length limit (the caller checks). With a shortlist,
     * their words join the batch's set. */
    const beam_hint *const *hints;
    int max_len;        /* a cap on the length limit (tokens, EOS included); 0: none */
} beam_opts;

typedef struct beam_hyp {
    int len;            /* tokens, EOS included when finished */
    int *tok;
    double logprob;     /* Σ log p of the tokens */
    double score;       /* what it was ranked by */
    int finished;       /* ended with EOS */
    real *attn;         /* [len, xlen] attention rows (source EOS included) or NULL */
} beam_hyp;

typedef struct beam_sent {
    int n;              /* hypotheses, best first, distinct */
    beam_hyp *hyp;
} beam_sent;

/* Decodes every sentence of src with the ensemble e; out[0..src->B) receive the results (free
 * with beam_sent_free). */
int beam_search_ens(beam_sent *out, infer_ens *e, const batch *src, const beam_opts *o, nmt_err *err);
void beam_sent_free(beam_sent *s);
/* The length limit of a source of len tokens (EOS included). */
int beam_max_len(double max_ratio, int len);
/* The same, capped at max_len tokens when max_len > 0 (nmt_translate_opts.max_len). */
int beam_len_limit(double max_ratio, int max_len, int len);
/* What a finished hypothesis of log-probability lp and len tokens is ranked by under o (beam
 * search and sampling rank alike): lp, or with o->normalize lp / len^alpha. */
double beam_rank_score(const beam_opts *o, double lp, int len);

#endif
