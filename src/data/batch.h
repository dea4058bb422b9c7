/* batch.h: a minibatch of sentence pairs as the model reads it: time-major id matrices padded
 * to the longest sentence, with each sentence's real length (its EOS included). */
#ifndef NMT_BATCH_H
#define NMT_BATCH_H

typedef struct batch {
    int B, Tx, Ty;     /* rows, padded source and target lengths */
    int *x;            /* [Tx*B]: x[t*B + b], padding holds 0 (EOS id) and is never read */
    int *y;            /* [Ty*B] */
    int *xlen, *ylen;  /* [B], each >= 1 */
    /* The same arrays in the compute backend's memory, where kernels read them: the layer that
     * runs a batch uploads it once into its workspace and points these there (NULL before). */
    const int *dev_x, *dev_y, *dev_xlen, *dev_ylen;
} batch;

/* Guided alignment's word links of a batch's rows (host memory; data/links.h): row r's are
 * lk[2·off[r] .. 2·off[r+1]), each (source position, target position), sorted by target then
 * source. Kept apart from batch: only training reads them. */
typedef struct batch_links {
    int *off;          /* [B+1] */
    int *lk;
} batch_links;

#endif
