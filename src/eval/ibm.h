/* ibm.h: a classical word aligner to compare attention alignments with: IBM Model 1 (Brown et
 * al. 1993) with fast_align's diagonal-favouring alignment prior (Dyer et al. 2013, "A Simple,
 * Fast, and Effective Reparameterization of IBM Model 2"), trained by EM; Viterbi alignments in
 * either direction and their symmetrisation (intersection, union, grow-diag[-final[-and]]).
 *
 * The model, for a pair of a conditioning sentence e_1..e_n (plus e_0 = NULL) and a generated
 * sentence f_1..f_m (forward: e = source, f = target; reverse: the other way round):
 *
 *     p(f, a | e) = prod_i  delta(a_i = j | i, m, n) * t(f_i | e_{a_i})
 *
 *     delta(0 | i, m, n) = p0
 *     delta(j | i, m, n) = (1 - p0) * exp(-lambda |i/m - j/n|) / Z_lambda(i, m, n),  j = 1..n
 *
 * with positions i and j counted from 1 and Z the sum of the exponentials over j = 1..n. A
 * "plain Model 1" iteration uses Brown et al.'s uniform delta = 1/(n+1) over NULL and the n
 * words instead. Only t is estimated (lambda and p0 stay fixed), so every EM iteration with a
 * fixed prior can only raise the log-likelihood.
 *
 * t is stored sparsely: one sorted row of generated-word ids per conditioning word (row 0 for
 * NULL), over the pairs that co-occur in some trained sentence pair; memory is about 20 bytes per
 * distinct co-occurring pair. The E-step runs over sentence pairs in parallel (OpenMP) and adds
 * the posteriors into the counts in sentence order, so results are bit-identical for any number
 * of threads. Nothing here prints or exits; a model is not thread-safe while it trains, and may
 * be read (t, Viterbi) by many threads once trained.
 */
#ifndef NMT_IBM_H
#define NMT_IBM_H

#include <stddef.h>

#include "nmt.h"
#include "data/vocab.h"

typedef struct ibm_opts {
    int iterations;        /* EM iterations (5) */
    int model1_iterations; /* how many of the first ones are plain Model 1 (1, like fast_align) */
    int favor_diagonal;    /* 1: the diagonal prior after those; 0: Model 1 throughout (1) */
    double lambda;         /* diagonal tension (4); >= 0 */
    double p0;             /* NULL probability under the diagonal prior (0.08); in [0, 1) */
    int threads;           /* OpenMP threads; 0 = OpenMP's default */
} ibm_opts;

ibm_opts ibm_opts_default(void);
/* Checks ranges; NMT_ERR_ARG with a message naming the field. */
int ibm_opts_check(const ibm_opts *o, nmt_err *err);

/* A parallel corpus as word ids. Side 0 is the source, side 1 the target; ids on each side are
 * those of a vocabulary over every word of that side (vocab.h: ids 0 and 1 are reserved, so a
 * side's ids run 0..types-1 with a few unused). Tokens are split on blanks (text/words.h). */
typedef struct ibm_corpus {
    long n;            /* sentence pairs */
    long *off[2];      /* [n+1]: pair k's words on side s are ids[s][off[s][k] .. off[s][k+1]) */
    int *ids[2];
    vocab *voc[2];
    int max_len[2];    /* the longest sentence of each side */
} ibm_corpus;

/* From n lines per side (src[k] and tgt[k] are pair k). The lines are not changed. */
int ibm_corpus_init(ibm_corpus *c, const char *const *src, const char *const *tgt, long n,
                    nmt_err *err);
void ibm_corpus_free(ibm_corpus *c); /* NULL and zeroed structs are fine */
static inline int ibm_corpus_len(const ibm_corpus *c, int side, long k)
{
    return (int)(c->off[side][k + 1] - c->off[side][k]);
}
/* The id of a word on side 0 or 1, -1 if the side never has it. */
int ibm_corpus_word(const ibm_corpus *c, int side, const char *word);

/* One direction's model over a corpus (which must outlive it). reverse = 0: t(target | source),
 * each target word aligned to a source position; reverse = 1: t(source | target). Pairs with an
 * empty side are not trained on and get no links. */
typedef struct ibm_model ibm_model;

int ibm_model_init(ibm_model **out, const ibm_corpus *c, int reverse, const ibm_opts *o,
                   nmt_err *err);
void ibm_model_free(ibm_model *m);

/* What one EM iteration saw: the log-likelihood (natural log) of the generated words of every
 * trained pair under the parameters before the update, and how many words that is. */
typedef struct ibm_iter_stats {
    int iteration;     /* 1-based */
    int diagonal;      /* 1: the diagonal prior was used; 0: plain Model 1 */
    double loglik;
    long words;
    size_t pairs;      /* distinct co-occurring (conditioning, generated) word pairs in t */
} ibm_iter_stats;

/* One EM iteration: E-step over every trained pair, then t(f|e) = c(f,e) / sum_f' c(f',e).
 * Fails (NMT_ERR_NUMERIC) if a word's probability underflows. */
int ibm_model_em(ibm_model *m, ibm_iter_stats *st, nmt_err *err);

/* t(gen | cond): ids of the conditioning side (-1 = NULL) and the generated side (the target
 * side in a forward model). 0 for a pair that never co-occurs. */
double ibm_model_t(const ibm_model *m, int cond, int gen);

/* Viterbi alignments of pairs first .. first+count-1 (each generated word to its most probable
 * position under the prior of the last iteration and t; ties go to the lowest position, NULL
 * first), in parallel. a receives, pair after pair, one entry per generated word: the 0-based
 * position on the conditioning side, or -1 for NULL (unaligned). For a forward model that is
 * sum of target lengths entries, a[j] = source position of target word j. */
int ibm_model_viterbi(const ibm_model *m, long first, long count, int *a, nmt_err *err);

/* ---- links and symmetrisation --------------------------------------------------------------
 * A link (i, j) joins source word i and target word j (0-based); link lists are int arrays of
 * (i, j) pairs. For one sentence pair of n source and m target words, fwd holds the links of a
 * forward model (each target word's Viterbi link) and rev those of a reverse model, though any
 * link sets will do. Modes:
 *   FORWARD, REVERSE   one direction's links as they are
 *   INTERSECT, UNION   the links in both, in either
 *   GROW_DIAG          Koehn et al. (2003) as in the Moses training pseudo-code: start from the
 *                      intersection; repeat until nothing changes: scan the current links by
 *                      source then target position and, for each, its 8 neighbours in the order
 *                      (-1,0) (0,-1) (1,0) (0,1) (-1,-1) (-1,1) (1,-1) (1,1), as (source, target)
 *                      offsets; add a neighbour that is in the union and whose source or target
 *                      word is still unaligned. A link added during a scan is itself scanned
 *                      when the scan reaches it.
 *   GROW_DIAG_FINAL    then FINAL: scanning by source then target position, add each forward
 *                      link, then each reverse link, whose source OR target word is unaligned
 *   GROW_DIAG_FINAL_AND the same with AND: both words unaligned (the "final-and" of Moses)
 */
enum ibm_sym {
    IBM_SYM_FORWARD = 0,
    IBM_SYM_REVERSE,
    IBM_SYM_INTERSECT,
    IBM_SYM_UNION,
    IBM_SYM_GROW_DIAG,
    IBM_SYM_GROW_DIAG_FINAL,
    IBM_SYM_GROW_DIAG_FINAL_AND
};

/* "intersect", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and" (also "gdfa");
 * -1 for anything else, "forward" and "reverse" included: ibm_sym_name gives those two names
 * for printing, but they are not symmetrisations. */
int ibm_sym_parse(const char *name);
const char *ibm_sym_name(int mode);

/* Scratch bytes ibm_links needs for an n x m pair. */
size_t ibm_links_scratch(int n, int m);
/* The links of one sentence pair under mode, from nfwd forward and nrev reverse links (a list
 * that the mode does not read may be NULL), written to links sorted by i then j, each once;
 * links needs room for nfwd + nrev links (no mode gives more). Returns the number of links; -1
 * if an input link is outside the n x m pair. */
int ibm_links(int mode, int n, int m, const int *fwd, int nfwd, const int *rev, int nrev,
              void *scratch, int *links);
/* The links of one sentence's Viterbi alignment a[0..len) (ibm_model_viterbi's entries for one
 * pair; reverse: those of a reverse model), NULL-aligned words left out, in word order; links
 * needs room for len links. Returns how many. */
int ibm_viterbi_links(const int *a, int len, int reverse, int *links);

#endif
