/* batcher.h: the order in which training visits sentence pairs (MODEL.md section 4, Appendix B):
 * the corpus is shuffled once; every k updates the next k·B pairs are sorted by target then
 * source length and cut into k minibatches of B, traversed in order. With `reshuffle` (the
 * reference implementation's order) the corpus is reshuffled every epoch and the k minibatches
 * of a block are visited in random order. An epoch's plan is materialised as one array, so a
 * checkpoint saves the position exactly. */
#ifndef NMT_BATCHER_H
#define NMT_BATCHER_H

#include "data/batch.h"
#include "data/corpus.h"
#include "base/rng.h"

typedef struct batcher {
    const pairs *p;
    int B, k, reshuffle;
    int *shuffled;    /* [n] corpus order (shuffled once, or per epoch) */
    int *order;       /* [n] this epoch's pairs, grouped into consecutive minibatches */
    int *starts;      /* [n/B + n/(kB) + 2] minibatch boundaries in order */
    int nb;           /* minibatches this epoch */
    int next;         /* index of the next minibatch */
    int epoch;        /* 1-based epoch of the next minibatch */
    rng r;
} batcher;

int batcher_init(batcher *bt, const pairs *p, int B, int k, int reshuffle, uint64_t seed, nmt_err *err);
void batcher_free(batcher *bt);
/* Plans epoch bt->epoch from bt->shuffled (reshuffling first in reshuffle mode). */
void batcher_plan(batcher *bt);
/* Pair indices of the next minibatch (*count of them); moves to the next epoch after the last. */
const int *batcher_next(batcher *bt, int *count);
/* Fraction of the current epoch already served. */
double batcher_progress(const batcher *bt);
/* Sorts pair indices by (target, source) length, as blocks are sorted. */
void sort_by_length(int *ids, int n, const pairs *p);

/* A batch with its own storage, for up to B pairs of any length in p. */
typedef struct batch_buf {
    batch b;
    int capB, capTx, capTy;
    int *order;            /* [capB] scratch: which of ids fills each row */
    batch_links links;     /* the rows' links when p has them (links.off NULL otherwise) */
} batch_buf;

int batch_buf_init(batch_buf *bb, const pairs *p, int B, nmt_err *err);
void batch_buf_free(batch_buf *bb);
/* Fills bb->b (and bb->links, when p has links) with pairs ids[0..count) of p (time-major,
 * padded with 0), the rows ordered by
 * source length, longest first (ties in the order of ids): then the pairs still running at
 * each source position are the first rows, and the encoder runs each step on those alone. */
void batch_fill(batch_buf *bb, const pairs *p, const int *ids, int count);

#endif
